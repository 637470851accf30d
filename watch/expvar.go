package watch

func publish(w *Watcher)   {}
func unpublish(w *Watcher) {}
