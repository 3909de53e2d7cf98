package exgate

import (
	"encoding/json"
	"strconv"
)

// Klines and order books are the largest and most frequent answers, so
// their JSON is written by hand rather than through reflection. The output
// is exactly what encoding/json makes of the struct tags. Decimal fields
// that are plain decimals (as adapters deliver them) are written as they
// are; anything else is quoted by encoding/json.

// AppendKlinesJSON appends ks as a JSON array of Kline objects.
func AppendKlinesJSON(b []byte, ks []Kline) []byte {
	b = append(b, '[')
	for i := range ks {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendKlineJSON(b, &ks[i])
	}
	return append(b, ']')
}

// AppendKlineJSON appends one Kline object, as AppendKlinesJSON writes each
// element: for adapters that encode answers row by row as they read them.
func AppendKlineJSON(b []byte, k *Kline) []byte {
	b = append(b, `{"openTime":`...)
	b = strconv.AppendInt(b, k.OpenTime, 10)
	b = appendStringField(b, `,"openPrice":`, k.OpenPrice)
	b = appendStringField(b, `,"highPrice":`, k.HighPrice)
	b = appendStringField(b, `,"lowPrice":`, k.LowPrice)
	b = appendStringField(b, `,"closePrice":`, k.ClosePrice)
	b = appendStringField(b, `,"volume":`, k.Volume)
	b = append(b, `,"closeTime":`...)
	b = strconv.AppendInt(b, k.CloseTime, 10)
	b = append(b, `,"numberOfTrades":`...)
	if k.NumberOfTrades == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendUint(b, *k.NumberOfTrades, 10)
	}
	return append(b, '}')
}

// AppendOrderBookJSON appends book as a JSON OrderBook object.
func AppendOrderBookJSON(b []byte, book OrderBook) []byte {
	b = append(b, `{"bids":`...)
	b = appendLevels(b, book.Bids)
	b = append(b, `,"asks":`...)
	b = appendLevels(b, book.Asks)
	return append(b, '}')
}

func appendLevels(b []byte, levels []Level) []byte {
	b = append(b, '[')
	for i := range levels {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendStringField(b, `{"price":`, levels[i].Price)
		b = appendStringField(b, `,"quantity":`, levels[i].Quantity)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendStringField(b []byte, prefix, v string) []byte {
	b = append(b, prefix...)
	if safeJSONText(v) {
		b = append(b, '"')
		b = append(b, v...)
		return append(b, '"')
	}
	q, _ := json.Marshal(v) // a string always marshals
	return append(b, q...)
}

// safeJSONText reports whether s can go between quotes as it is: printable
// ASCII other than the quote, the backslash and the characters
// encoding/json escapes for HTML safety.
func safeJSONText(s string) bool {
	for i := 0; i < len(s); i++ {
		if !safeJSONByte[s[i]] {
			return false
		}
	}
	return true
}

// safeJSONByte is safeJSONText's test for one byte, as a table: one load
// per byte instead of seven comparisons, on every price of every answer.
var safeJSONByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c <= 0x7e && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
