// exgate console, market page: candles (TradingView lightweight-charts)
// and a cumulative depth chart of the order book (a canvas drawing). The
// history comes from the console's JSON endpoints; then the page is live
// from the gateway's stream hub through /api/market/live (Server-Sent
// Events: "book" and "kline" carry the stream's messages), and polls the
// JSON endpoints every 2 seconds only when the stream is unavailable; a
// refused read (4xx) stops the page rather than being asked again.
// Prices are shown as the exact decimal strings the API gives; the charts
// plot them as numbers.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var root = document.getElementById("market");
  if (!root || !window.LightweightCharts) return;
  var q = "exchange=" + encodeURIComponent(root.dataset.exchange) +
    "&symbol=" + encodeURIComponent(root.dataset.symbol) +
    "&interval=" + encodeURIComponent(root.dataset.interval);
  var box = document.getElementById("candles");
  var chart = LightweightCharts.createChart(box, {
    autoSize: true,
    layout: { attributionLogo: false, background: { color: "#ffffff" }, textColor: "#1b1f24" },
    grid: { vertLines: { color: "#eef1f4" }, horzLines: { color: "#eef1f4" } },
    timeScale: { timeVisible: true, secondsVisible: false },
  });
  var candles = chart.addCandlestickSeries();
  window.exgateMarket = { candles: 0, levels: 0, live: false, updates: 0 };
  var status = document.getElementById("market-status");
  var set = function (id, text) { var el = document.getElementById(id); if (el.textContent !== text) el.textContent = text; };

  function getJSON(path) {
    return fetch(path + "?" + q, { credentials: "same-origin", headers: { Accept: "application/json" } }).then(function (r) {
      if (r.status === 401) { window.location.href = "/login"; throw new Error("logged out"); }
      return r.json().then(function (body) {
        if (!r.ok) {
          var err = new Error(body.detail || r.statusText);
          // A refusal (an unknown pair, say) stays a refusal: asking
          // again every 2 seconds would only fill the console with 400s.
          err.refused = r.status >= 400 && r.status < 500;
          throw err;
        }
        return body;
      });
    });
  }

  function bar(k) {
    return { time: Math.floor(k.openTime / 1000), open: +k.openPrice, high: +k.highPrice, low: +k.lowPrice, close: +k.closePrice };
  }

  function loadKlines() {
    return getJSON("/api/market/klines").then(function (ks) {
      candles.setData(ks.map(bar));
      window.exgateMarket.candles = ks.length;
      if (ks.length) set("last-price", ks[ks.length - 1].closePrice);
    });
  }

  var canvas = document.getElementById("depth");
  function drawDepth(book) {
    var dpr = window.devicePixelRatio || 1;
    var w = canvas.clientWidth, h = canvas.clientHeight;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
    }
    var ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    var cum = function (levels) {
      var total = 0;
      return levels.map(function (l) { total += +l.quantity; return { p: +l.price, q: total }; });
    };
    var bids = cum(book.bids || []), asks = cum(book.asks || []);
    if (!bids.length && !asks.length) return;
    var prices = bids.concat(asks).map(function (x) { return x.p; });
    var lo = Math.min.apply(null, prices), hi = Math.max.apply(null, prices);
    var top = Math.max(bids.length ? bids[bids.length - 1].q : 0, asks.length ? asks[asks.length - 1].q : 0) || 1;
    var pad = 24;
    var x = function (p) { return pad + (hi === lo ? 0.5 : (p - lo) / (hi - lo)) * (w - 2 * pad); };
    var y = function (v) { return h - pad - (v / top) * (h - 2 * pad); };
    function side(points, fill, stroke) {
      if (!points.length) return;
      ctx.beginPath();
      ctx.moveTo(x(points[0].p), y(0));
      points.forEach(function (pt, i) {
        ctx.lineTo(x(pt.p), y(i ? points[i - 1].q : 0));
        ctx.lineTo(x(pt.p), y(pt.q));
      });
      ctx.lineTo(x(points[points.length - 1].p), y(0));
      ctx.closePath();
      ctx.fillStyle = fill;
      ctx.fill();
      ctx.strokeStyle = stroke;
      ctx.stroke();
    }
    side(bids, "rgba(38,166,154,0.35)", "#26a69a");
    side(asks, "rgba(239,83,80,0.35)", "#ef5350");
    ctx.fillStyle = "#59636e";
    ctx.font = "12px system-ui, sans-serif";
    ctx.fillText(String(lo), pad, h - 6);
    var hiText = String(hi);
    ctx.fillText(hiText, w - pad - ctx.measureText(hiText).width, h - 6);
  }

  function showBook(b) {
    drawDepth(b);
    window.exgateMarket.levels = (b.bids || []).length + (b.asks || []).length;
    set("best-bid", b.bids && b.bids.length ? b.bids[0].price : "none");
    set("best-ask", b.asks && b.asks.length ? b.asks[0].price : "none");
  }

  function loadBook() {
    return getJSON("/api/market/book").then(showBook);
  }

  // Polling: when the stream is unavailable.
  function poll(why) {
    Promise.all([loadKlines(), loadBook()]).then(function () {
      set("market-status", "live (polled every 2 s: " + why + ")");
      window.setTimeout(function () { poll(why); }, 2000);
    }, function (err) {
      if (err.refused) { set("market-status", "stopped: " + err.message); return; }
      set("market-status", "update failed: " + err.message);
      window.setTimeout(function () { poll(why); }, 2000);
    });
  }

  function updated() {
    window.exgateMarket.updates++;
    if (!window.exgateMarket.live) {
      window.exgateMarket.live = true;
      set("market-status", "live (streamed)");
    }
  }

  // The stream: each kline message replaces the current candle (or
  // starts the next one), each book message redraws the depth.
  function stream() {
    var es = new EventSource("/api/market/live?" + q);
    var fallback = function (why) {
      es.close();
      window.exgateMarket.live = false;
      poll(why);
    };
    es.addEventListener("kline", function (e) {
      var k = JSON.parse(e.data).data;
      try { candles.update(bar(k)); } catch (err) { return; } // older than the last candle drawn
      set("last-price", k.closePrice);
      updated();
    });
    es.addEventListener("book", function (e) {
      showBook(JSON.parse(e.data).data);
      updated();
    });
    es.addEventListener("problem", function (e) {
      var p = JSON.parse(e.data);
      fallback("the stream ended: " + p.detail);
    });
    es.onerror = function () {
      if (es.readyState === EventSource.CLOSED) {
        fallback("the stream is unavailable");
      } else {
        window.exgateMarket.live = false;
        set("market-status", "reconnecting to the stream");
      }
    };
  }

  Promise.all([loadKlines(), loadBook()]).then(function () {
    set("market-status", "connecting to the stream");
    if (window.EventSource) stream(); else poll("this browser has no EventSource");
  }, function (err) {
    if (err.refused) { set("market-status", "stopped: " + err.message); return; }
    set("market-status", "update failed: " + err.message);
    window.setTimeout(function () { poll("the first read failed"); }, 2000);
  });
});
