package exgate

import "context"

// KlinesAppender is an Exchange that writes its klines answer as the
// API's JSON itself (the Binance adapter converts the exchange's answer
// straight to it; the coalescing wrapper copies an answer it encoded once
// for every request it shares). Order books have the same path in
// httpapi (its bookEncoder, which the coalescing wrapper implements).
type KlinesAppender interface {
	// AppendRecentKlinesJSON appends RecentKlines' answer to dst as
	// AppendKlinesJSON writes it and returns the extended buffer.
	AppendRecentKlinesJSON(ctx context.Context, dst []byte, cred Credential, req KlineRequest) ([]byte, error)
}

// AppendRecentKlinesJSON appends ex's klines answer to dst as the API's
// JSON: through the encoding of ex or of an exchange it wraps when one is
// a KlinesAppender (Ability), else by encoding RecentKlines.
func AppendRecentKlinesJSON(ctx context.Context, ex Exchange, dst []byte, cred Credential, req KlineRequest) ([]byte, error) {
	if a, ok := Ability[KlinesAppender](ex); ok {
		return a.AppendRecentKlinesJSON(ctx, dst, cred, req)
	}
	ks, err := ex.RecentKlines(ctx, cred, req)
	if err != nil {
		return dst, err
	}
	return AppendKlinesJSON(dst, ks), nil
}
