package stream

import (
	"testing"

	"github.com/exgate/exgate"
)

func TestParseRequest(t *testing.T) {
	for _, tc := range []struct {
		frame string
		want  Request
		code  exgate.Code
		param string
	}{
		{frame: `{"op":"subscribe","channel":"orders"}`, want: Request{Op: OpSubscribe, Channel: ChannelOrders}},
		{frame: ` {"channel":"book","op":"unsubscribe","asset1":"eth","asset2":"btc"} `, want: Request{Op: OpUnsubscribe, Channel: ChannelBook, Symbol: exgate.Symbol{Base: "ETH", Quote: "BTC"}, Depth: 20}},
		{frame: `{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT","depth":100}`, want: Request{Op: OpSubscribe, Channel: ChannelBook, Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Depth: 100}},
		{frame: `{"op":"subscribe","channel":"klines","asset1":"BTC","asset2":"USDT","interval":"1M"}`, want: Request{Op: OpSubscribe, Channel: ChannelKlines, Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Interval: exgate.Interval1M}},
		{frame: `{"op":"subscribe","channel":"klines","asset1":"BTC","asset2":"USDT"}`, want: Request{Op: OpSubscribe, Channel: ChannelKlines, Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Interval: exgate.Interval1m}},
		{frame: ``, code: exgate.CodeInvalidParameter},
		{frame: `[]`, code: exgate.CodeInvalidParameter},
		{frame: `{"op":"subscribe","channel":"orders"}{}`, code: exgate.CodeInvalidParameter},
		{frame: `{"op":"subscribe","channel":"orders","x":1}`, code: exgate.CodeInvalidParameter, param: "x"},
		{frame: `{"op":1,"channel":"orders"}`, code: exgate.CodeInvalidParameter, param: "op"},
		{frame: `{"channel":"orders"}`, code: exgate.CodeInvalidParameter, param: "op"},
		{frame: `{"op":"subscribe"}`, code: exgate.CodeInvalidParameter, param: "channel"},
		{frame: `{"op":"subscribe","channel":"Orders"}`, code: exgate.CodeInvalidParameter, param: "channel"},
		{frame: `{"op":"subscribe","channel":"orders","asset1":"BTC"}`, code: exgate.CodeInvalidParameter, param: "asset1"},
		{frame: `{"op":"subscribe","channel":"book","asset1":"BTC"}`, code: exgate.CodeInvalidParameter, param: "asset2"},
		{frame: `{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"btc"}`, code: exgate.CodeInvalidParameter, param: "asset2"},
		{frame: `{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT","depth":"20"}`, code: exgate.CodeInvalidParameter, param: "depth"},
		{frame: `{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT","depth":20.5}`, code: exgate.CodeInvalidParameter, param: "depth"},
		{frame: `{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT","depth":1e1}`, code: exgate.CodeInvalidParameter, param: "depth"},
		{frame: `{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT","interval":"1m"}`, code: exgate.CodeInvalidParameter, param: "interval"},
		{frame: `{"op":"subscribe","channel":"klines","asset1":"BTC","asset2":"USDT","depth":5}`, code: exgate.CodeInvalidParameter, param: "depth"},
		{frame: `{"op":"subscribe","channel":"klines","asset1":"BTC","asset2":"USDT","interval":"1h "}`, code: exgate.CodeInvalidParameter, param: "interval"},
		{frame: "{\"op\":\"subscribe\",\"channel\":\"\xff\"}", code: exgate.CodeInvalidParameter},
	} {
		got, err := ParseRequest([]byte(tc.frame))
		if tc.code == "" {
			if err != nil || got != tc.want {
				t.Errorf("%s: got %+v, %v; want %+v", tc.frame, got, err, tc.want)
			}
			continue
		}
		if err == nil || err.Code != tc.code || err.Param != tc.param {
			t.Errorf("%s: got %+v, want %s param %q", tc.frame, err, tc.code, tc.param)
		}
	}
}

// FuzzParseRequest: any frame is answered with a request or a parameter
// error, never a panic; an accepted request is complete.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"op":"subscribe","channel":"orders"}`,
		`{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT","depth":20}`,
		`{"op":"unsubscribe","channel":"klines","asset1":"BTC","asset2":"USDT","interval":"1m"}`,
		`{"op":"subscribe","channel":"book","depth":1e400}`, `{`, `null`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		r, err := ParseRequest(frame)
		if err != nil {
			if err.Code != exgate.CodeInvalidParameter || err.Detail == "" {
				t.Fatalf("error %+v", err)
			}
			return
		}
		if r.Op != OpSubscribe && r.Op != OpUnsubscribe {
			t.Fatalf("op %q", r.Op)
		}
		switch r.Channel {
		case ChannelOrders:
			if (r.Symbol != exgate.Symbol{}) || r.Depth != 0 || r.Interval != "" {
				t.Fatalf("orders with fields: %+v", r)
			}
		case ChannelBook:
			if r.Symbol.Base == "" || r.Symbol.Quote == "" || r.Depth < 1 || r.Depth > exgate.MaxStreamDepth {
				t.Fatalf("book %+v", r)
			}
		case ChannelKlines:
			if _, perr := exgate.ParseInterval(string(r.Interval)); perr != nil || r.Symbol.Base == "" {
				t.Fatalf("klines %+v", r)
			}
		default:
			t.Fatalf("channel %q", r.Channel)
		}
	})
}
