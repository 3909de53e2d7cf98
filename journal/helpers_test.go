package journal_test

import "encoding/json"

func jsonUnmarshal(b []byte, v any) error {
	if len(b) == 0 {
		return errEmpty
	}
	return json.Unmarshal(b, v)
}
