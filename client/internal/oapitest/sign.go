package oapitest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Signer signs the requests of a generated client as the gateway verifies
// them (api/openapi.yaml, "Signing"): it sets X-API-KEY and
// X-API-EXCHANGE-KEY, adds a `timestamp` when the request has none, and
// replaces the `signature` the generated code sends (empty, since the
// generator makes it a required field) with the HMAC-SHA256 of the
// parameter string. Use its Edit method as the client's RequestEditorFn:
//
//	s := &oapitest.Signer{APIKey: apiKey, Secret: secret, ExchangeKey: "demo"}
//	c, err := oapitest.NewClientWithResponses(baseURL, oapitest.WithRequestEditorFn(s.Edit))
//
// docs/clients.md carries this file as the example to copy.
type Signer struct {
	APIKey, Secret, ExchangeKey string
	// Now is the clock of the timestamps; nil means time.Now.
	Now func() time.Time
	// last keeps the timestamps strictly increasing: two identical
	// requests in one millisecond would otherwise carry one signature,
	// and the gateway refuses the second as a replay.
	last atomic.Int64
}

// Edit signs req; it is an oapitest.RequestEditorFn.
func (s *Signer) Edit(_ context.Context, req *http.Request) error {
	req.Header.Set("X-API-KEY", s.APIKey)
	req.Header.Set("X-API-EXCHANGE-KEY", s.ExchangeKey)
	if req.Body == nil || req.Method == http.MethodGet {
		return s.signQuery(req)
	}
	return s.signBody(req)
}

func (s *Signer) now() int64 {
	now := time.Now().UnixMilli()
	if s.Now != nil {
		now = s.Now().UnixMilli()
	}
	for {
		last := s.last.Load()
		ts := max(now, last+1)
		if s.last.CompareAndSwap(last, ts) {
			return ts
		}
	}
}

func (s *Signer) sign(params string) string {
	m := hmac.New(sha256.New, []byte(s.Secret))
	m.Write([]byte(params))
	return hex.EncodeToString(m.Sum(nil))
}

// signQuery signs the raw query exactly as it is sent: its pairs in order,
// without the signature pair, with a timestamp added at the end when the
// caller gave none; the signature goes last. timestamp=0 counts as none:
// it is what a generated client sends for a required timestamp left unset
// (StreamParams.Timestamp of GET /v1/stream, a plain int64), which the
// gateway would refuse.
func (s *Signer) signQuery(req *http.Request) error {
	var pairs []string
	hasTimestamp := false
	for p := range strings.SplitSeq(req.URL.RawQuery, "&") {
		name, _, _ := strings.Cut(p, "=")
		switch {
		case name == "" || name == "signature" || p == "timestamp=0":
			continue
		case name == "timestamp":
			hasTimestamp = true
		}
		pairs = append(pairs, p)
	}
	if !hasTimestamp {
		pairs = append(pairs, "timestamp="+strconv.FormatInt(s.now(), 10))
	}
	params := strings.Join(pairs, "&")
	req.URL.RawQuery = strings.TrimPrefix(params+"&signature="+s.sign(params), "&")
	return nil
}

// signBody signs a JSON body: its members in order, `name=value` joined by
// `&`, a string by its decoded content and a number, true, false or null by
// its literal text. The body is written again in that same order, without
// the generated empty signature, with a timestamp when it had none, and the
// signature last.
func (s *Signer) signBody(req *http.Request) error {
	raw, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return fmt.Errorf("sign: read body: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("sign: the body is not a JSON object")
	}
	var params []string
	var body bytes.Buffer
	body.WriteByte('{')
	hasTimestamp := false
	add := func(name string, member []byte, value string) {
		if body.Len() > 1 {
			body.WriteByte(',')
		}
		n, _ := json.Marshal(name)
		body.Write(n)
		body.WriteByte(':')
		body.Write(member)
		if name != "signature" {
			params = append(params, name+"="+value)
		}
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("sign: body: %w", err)
		}
		name, _ := tok.(string)
		var member json.RawMessage
		if err := dec.Decode(&member); err != nil {
			return fmt.Errorf("sign: member %s: %w", name, err)
		}
		if name == "signature" {
			continue
		}
		if name == "timestamp" {
			hasTimestamp = true
		}
		var value string
		switch member[0] {
		case '"':
			if err := json.Unmarshal(member, &value); err != nil {
				return fmt.Errorf("sign: member %s: %w", name, err)
			}
		case '{', '[':
			return fmt.Errorf("sign: member %s is an object or an array, which the gateway refuses", name)
		default:
			value = string(member) // a number's literal text, true, false, null
		}
		add(name, member, value)
	}
	if !hasTimestamp {
		ts := strconv.FormatInt(s.now(), 10)
		add("timestamp", []byte(ts), ts)
	}
	sig := s.sign(strings.Join(params, "&"))
	add("signature", []byte(`"`+sig+`"`), sig)
	body.WriteByte('}')
	b := body.Bytes()
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.ContentLength = int64(len(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return nil
}
