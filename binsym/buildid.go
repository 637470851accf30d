package binsym

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
)

// GoBuildID returns the Go build ID of the ELF executable at path (what
// `go tool buildid` prints), from its .note.go.buildid section.
func GoBuildID(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return "", fmt.Errorf("%s: no Go build ID note", path)
	}
	note, err := s.Data()
	if err != nil {
		return "", fmt.Errorf("%s: reading the build ID note: %w", path, err)
	}
	// An ELF note: name size, descriptor size, type, name "Go\x00\x00",
	// then the descriptor, the build ID.
	if len(note) < 16 {
		return "", errors.New("short Go build ID note")
	}
	nameSize := f.ByteOrder.Uint32(note[0:])
	descSize := f.ByteOrder.Uint32(note[4:])
	name := note[12:]
	if nameSize != 4 || !bytes.HasPrefix(name, []byte("Go\x00\x00")) || uint32(len(note)) < 16+descSize {
		return "", fmt.Errorf("%s: malformed Go build ID note", path)
	}
	return string(note[16 : 16+descSize]), nil
}
