package sampledata

import (
	"compress/gzip"
	"embed"
	"fmt"
	"io"
)

// files holds the gzipped data sets. The licence and source notes sit beside them
// in data/ and travel with the repository.
//
//go:embed data/*.gz
var files embed.FS

// open returns the decompressed contents of data/<name>.gz.
func open(name string) (io.ReadCloser, error) {
	f, err := files.Open("data/" + name + ".gz")
	if err != nil {
		return nil, fmt.Errorf("sampledata: open embedded %s: %w", name, err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("sampledata: decompress embedded %s: %w", name, err)
	}
	return zr, nil // the embedded bytes need no closing
}

// AdultTest returns the UCI Adult test split (16,281 rows) as the original CSV
// text with its header line: values keep their leading space, missing values are
// "?", and labels keep the original trailing period (">50K."). The caller closes it.
func AdultTest() (io.ReadCloser, error) {
	return open("adult_test.csv")
}
