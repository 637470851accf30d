//go:build !unix

package scenarios

import "os"

// ownedByMe reports false where ownership cannot be read: nothing is
// removed.
func ownedByMe(os.FileInfo) bool { return false }

// processExists reports true where processes cannot be checked.
func processExists(int) bool { return true }
