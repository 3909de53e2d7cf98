package exgate

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrAnswerTooLarge is returned by ReadAnswer for an answer over its limit.
var ErrAnswerTooLarge = errors.New("exchange answer too large")

// ReadAnswer reads an exchange's answer body of at most limit bytes. When
// the answer announces its length, it is read into one allocation of that
// size: a 500-kline answer is about 90 KB, and reading it by growing a
// slice would allocate and copy twice that on every market-data request.
func ReadAnswer(resp *http.Response, limit int64) ([]byte, error) {
	if n := resp.ContentLength; n >= 0 && n <= limit {
		b := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, b); err != nil {
			return nil, fmt.Errorf("reading %d-byte answer: %w", n, err)
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: over %d bytes", ErrAnswerTooLarge, limit)
	}
	return b, nil
}
