// Package webview serves a local web view of one analysed heap dump, as
// "ctxleak holders --http" does: the holder report (groups), the dominator
// tree with its children loaded on demand, an object's page with the paths
// from the roots that hold it, the roots (goroutines and their frames,
// globals, timers, finalizers) and a treemap of retained bytes by holder
// and type. Pages are html/template files and a little plain JavaScript,
// embedded in the binary: no network access, no build step.
//
// Every page has a JSON twin under /api/, documented in docs/web.md, each
// document with its "schema" first. No page or document carries object
// contents: only addresses, sizes, types and names.
//
// A Server serializes its use of the heap.Analysis, which is not safe for
// concurrent use; the pages bound what they ship (a few thousand rows at
// most), so a heap of tens of millions of objects stays responsive.
package webview
