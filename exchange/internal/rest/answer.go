package rest

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// ErrAnswerTooLarge is returned by ReadAnswer for an answer over its limit.
var ErrAnswerTooLarge = errors.New("exchange answer too large")

// ReadAnswer reads an exchange's answer body of at most limit bytes. When
// the answer announces its length, it is read into one allocation of that
// size: a 500-kline answer is about 90 KB, and reading it by growing a
// slice would allocate and copy twice that on every market-data request.
func ReadAnswer(resp *http.Response, limit int64) ([]byte, error) {
	return AppendAnswer(nil, resp, limit, 512)
}

// AppendAnswer reads like ReadAnswer, appending the answer to dst: for
// callers that read large answers into buffers they reuse. dst grows to
// the announced length at once, else to sizeHint more bytes, and the body
// is read straight into it in as few reads as the connection allows.
func AppendAnswer(dst []byte, resp *http.Response, limit int64, sizeHint int) ([]byte, error) {
	start := len(dst)
	if n := resp.ContentLength; n >= 0 {
		if n > limit {
			return dst, fmt.Errorf("%w: %d bytes announced, over %d", ErrAnswerTooLarge, n, limit)
		}
		dst = slices.Grow(dst, int(n))
		m, err := io.ReadFull(resp.Body, dst[start:start+int(n)])
		if err != nil {
			return dst[:start], fmt.Errorf("reading %d-byte answer: %w", n, err)
		}
		return dst[:start+m], nil
	}
	dst = slices.Grow(dst, int(min(max(int64(sizeHint), 512), limit+1)))
	for {
		if len(dst) == cap(dst) {
			dst = slices.Grow(dst, 512)
		}
		n, err := resp.Body.Read(dst[len(dst):min(cap(dst), start+int(limit)+1)])
		dst = dst[:len(dst)+n]
		if int64(len(dst)-start) > limit {
			return dst[:start], fmt.Errorf("%w: over %d bytes", ErrAnswerTooLarge, limit)
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst[:start], err
		}
	}
}

// ReadAnswerText reads like ReadAnswer, into a string: for the large
// market-data answers that are scanned as text, whose values are then
// substrings of it. The string is allocated once at the announced length,
// else at sizeHint (the caller's estimate), and grown only if that was
// short; the answer is not copied again to become a string.
func ReadAnswerText(resp *http.Response, limit int64, sizeHint int) (string, error) {
	size := int64(sizeHint)
	if n := resp.ContentLength; n >= 0 {
		if n > limit {
			return "", fmt.Errorf("%w: %d bytes announced, over %d", ErrAnswerTooLarge, n, limit)
		}
		size = n
	}
	var sb strings.Builder
	sb.Grow(int(min(max(size, 0), limit)))
	buf := make([]byte, 8<<10)
	for {
		n, err := resp.Body.Read(buf)
		if int64(sb.Len()+n) > limit {
			return "", fmt.Errorf("%w: over %d bytes", ErrAnswerTooLarge, limit)
		}
		sb.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	if resp.ContentLength >= 0 && int64(sb.Len()) != resp.ContentLength {
		return "", fmt.Errorf("reading %d-byte answer: %w", resp.ContentLength, io.ErrUnexpectedEOF)
	}
	return sb.String(), nil
}
