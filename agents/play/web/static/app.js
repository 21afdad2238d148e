// ddz-env web page: plain JS over the JSON API of agents/web/server.py. The server decides
// everything (legality, secrecy, scores); this file only draws views and sends what is clicked.
// Everything drawn from a response (names, records: records are shared files) is text: elements
// are made with createElement and filled with textContent, never with innerHTML and data.
"use strict";

const SUITS = ["\u2660", "\u2665", "\u2663", "\u2666"]; // drawn for looks: ranks alone matter
const SHOW = { T: "10" };
const $ = (id) => document.getElementById(id);

let mode = "play";        // "play" | "replay"
let game = null;          // {id, view} of the hand being played
let replay = null;        // {record, positions, k, seat}
let selected = new Set(); // indices into the person's hand string
let timer = null;

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
  const r = await fetch(path, opts);
  let data = null;
  try { data = await r.json(); } catch (e) { data = { error: `HTTP ${r.status}` }; }
  if (!r.ok) throw new Error(data && data.error ? data.error : `HTTP ${r.status}`);
  return data;
}

function message(text) { $("message").textContent = text || ""; }

// an element with a class and children (strings become text nodes, never markup)
function el(tag, cls, ...children) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
}

function backs(n) { return Array.from({ length: Math.max(0, Number(n) || 0) }, () => el("span", "back")); }

function cardEl(rank, nth, cls) {
  const d = document.createElement("div");
  d.className = "card" + (cls ? " " + cls : "");
  d.dataset.rank = rank;
  if (rank === "B" || rank === "R") {
    d.classList.add("joker");
    if (rank === "R") d.classList.add("red");
    // two faces apart by more than colour: a filled star and BIG, an open star and SMALL
    d.append(el("span", "jk", "JK"), el("span", "suit", rank === "R" ? "\u2605" : "\u2606"),
      el("span", "jlabel", rank === "R" ? "BIG" : "SMALL"));
    d.title = rank === "R" ? "big (red) joker" : "small (black) joker";
  } else {
    const suit = SUITS[nth % 4];
    if (suit === "\u2665" || suit === "\u2666") d.classList.add("red");
    if (rank === "T") d.classList.add("ten");
    d.append(el("span", "", SHOW[rank] || rank), el("span", "suit", suit));
  }
  return d;
}

function cardsEl(cards, small) {
  const box = document.createElement("div");
  box.className = "cards" + (small ? " small" : "");
  const seen = {};
  for (const c of cards || "") { seen[c] = (seen[c] || 0); box.appendChild(cardEl(c, seen[c]++)); }
  return box;
}

function pretty(cards) { return [...cards].map((c) => (c === "T" ? "10" : c)).join(" "); }

function isCards(name) { return /^[3-9TJQKA2BR]+$/.test(name); }

// a history entry as a person reads it: cards spaced with 10 for ten ("3 3 3 10"), else its name
function saidText(h) { return h.phase === "PLAY" && isCards(h.name) ? pretty(h.name) : h.name; }

function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

// what each seat did last in the round on the table (its most recent action among the last three)
function lastSaid(view) {
  const said = {};
  const h = view.history;
  const start = Math.max(0, h.length - 3);
  for (let i = start; i < h.length; i++) {
    if (view.phase === "PLAY" && h[i].phase !== "PLAY") continue;
    said[h[i].seat] = h[i];
  }
  return said;
}

function seatBox(box, view, s, me, said) {
  box.replaceChildren();
  box.className = box.className.replace(/\bturn\b/g, "").trim();
  if (view.to_act === s && !view.over) box.classList.add("turn");
  const name = document.createElement("div");
  name.className = "name";
  name.textContent = `seat ${s} · ${view.players[s]}`;
  const role = view.roles[s];
  if (role) { const b = document.createElement("span"); b.className = "badge " + role; b.textContent = role; name.appendChild(b); }
  if (view.doubled[s]) { const b = document.createElement("span"); b.className = "badge flag"; b.textContent = "doubled"; name.appendChild(b); }
  if (s === view.landlord && view.redoubled) { const b = document.createElement("span"); b.className = "badge flag"; b.textContent = "redoubled"; name.appendChild(b); }
  box.appendChild(name);
  const count = document.createElement("div");
  count.className = "count";
  count.dataset.seat = s;
  count.textContent = `${plural(view.cards_left[s], "card")} left`;
  box.appendChild(count);
  if (s !== me) {
    // a hand shown face up (watching, replays, the end) is a labelled row, apart from what the seat played
    if (view.hands[s] !== null) { if (view.hands[s]) box.appendChild(el("div", "hand-row", el("span", "row-label", "hand"), cardsEl(view.hands[s], true))); }
    else box.appendChild(el("div", "backs", ...backs(view.cards_left[s])));
  }
  const w = document.createElement("div");
  w.className = "said";
  w.id = `said-${s}`;
  const a = said[s];
  if (a) {
    w.appendChild(el("span", "row-label", "played"));
    if (a.phase === "PLAY" && isCards(a.name)) w.appendChild(cardsEl(a.name, true));
    else { const t = document.createElement("span"); t.className = "word"; t.textContent = a.name; w.appendChild(t); }
  }
  box.appendChild(w);
}

function statusText(view, me) {
  if (view.over) {
    const r = view.result;
    return r.void ? "Void hand: everyone passed" : `Hand over: seat ${r.winner} went out`;
  }
  const who = view.to_act === me && mode === "play" ? "your" : `seat ${view.to_act}'s`;
  const what = { BID: "bid", DOUBLE: "double?", REDOUBLE: "redouble?", PLAY: view.to_beat ? `to beat ${pretty(view.to_beat.cards)} (seat ${view.to_beat.seat})` : "lead" }[view.phase];
  return `${view.phase} · ${who} turn · ${what}`;
}

function draw(view, me) {
  const said = lastSaid(view);
  const right = (me + 1) % 3, left = (me + 2) % 3;
  seatBox($("seat-right"), view, right, me, said);
  seatBox($("seat-left"), view, left, me, said);
  const mine = $("seat-me");
  seatBox(mine, view, me, me, said);
  const hand = view.hands[me] || "";
  const box = cardsEl(hand, false);
  box.id = "hand";
  [...box.children].forEach((c, i) => {
    c.dataset.index = i;
    if (selected.has(i)) c.classList.add("selected");
    if (mode === "play" && view.your_turn && view.phase === "PLAY") c.addEventListener("click", () => toggle(i));
  });
  mine.insertBefore(box, mine.querySelector(".said"));
  $("status").textContent = statusText(view, me);
  const bottom = $("bottom");
  bottom.replaceChildren();
  if (view.bottom !== null) bottom.appendChild(cardsEl(view.bottom, true));
  else bottom.append(...backs(3));
  $("stake").textContent = view.stake ? `stake: ${view.stake.text}` : "";
  const log = $("log");
  log.replaceChildren();
  view.history.forEach((h, i) => {
    const li = document.createElement("li");
    li.textContent = `seat ${h.seat}: ${saidText(h)}`;
    if (i === view.history.length - 1) li.className = "current";
    log.appendChild(li);
  });
  drawResult(view);
  document.body.dataset.phase = view.phase;
}

function drawResult(view) {
  const box = $("result");
  box.replaceChildren();
  if (!view.over) { box.classList.add("hidden"); delete box.dataset.scores; return; }
  const r = view.result;
  box.classList.remove("hidden");
  box.dataset.scores = JSON.stringify(r.scores);
  const o = view.outcome;
  const head = el("div", "headline " + (o.side === null ? "" : (o.headline === "You lose" ? "loss" : "win")), o.headline);
  head.id = "headline";
  const line = el("div", "outcome-line", o.line);
  line.id = "outcome-line";
  box.append(head, line);
  if (r.void) { box.append("All three passed the bid (R4); nobody scores."); return; }
  const extra = [["bombs", r.bombs], ["rockets", r.rockets]].map(([k, v]) => `${k} ${v}`).join(", ")
    + (r.spring ? ", spring" : "") + (r.anti_spring ? ", anti-spring" : "");
  const table = el("table", "", el("tr", "", ...["seat", "role", "double", "multiplier", "score"].map((h) => el("th", "", h))));
  for (const s of [0, 1, 2]) {
    const role = s === r.landlord ? "landlord" : "farmer";
    const dbl = s === r.landlord ? (r.redoubled ? "redoubled" : "") : (r.doubled[s] ? "doubled" : "");
    const exp = s === r.landlord ? "" : `2^${r.exponents[s]}`;
    const score = el("td", (r.scores[s] > 0 ? "win" : "loss") + " score", `${r.scores[s] > 0 ? "+" : ""}${r.scores[s]}`);
    score.dataset.seat = s;
    table.append(el("tr", "", el("td", "", `seat ${s} · ${view.players[s]}`), el("td", "", role), el("td", "", dbl),
      el("td", "", exp), score));
  }
  box.append(el("div", "rule", `R19: a farmer scores bid × 2^n, the landlord the opposite of their sum (bid ${r.bid}, ${extra})`), table);
}

function toggle(i) {
  if (selected.has(i)) selected.delete(i); else selected.add(i);
  drawPlay();
}

function drawPlay() {
  const view = game.view;
  const me = view.seat;
  draw(view, me);
  const turn = view.your_turn;
  document.body.dataset.state = view.over ? "over" : (turn ? "your-turn" : "waiting");
  document.body.dataset.game = game.id;
  $("controls").classList.toggle("hidden", !turn);
  $("bid-buttons").classList.toggle("hidden", !(turn && view.phase === "BID"));
  $("double-buttons").classList.toggle("hidden", !(turn && (view.phase === "DOUBLE" || view.phase === "REDOUBLE")));
  $("play-buttons").classList.toggle("hidden", !(turn && view.phase === "PLAY"));
  if (turn && view.phase === "BID")
    document.querySelectorAll(".bid-btn").forEach((b) => { b.disabled = !view.legal.includes(b.dataset.action === "pass" ? "bid pass" : b.dataset.action); });
  if (turn && (view.phase === "DOUBLE" || view.phase === "REDOUBLE")) {
    const word = view.phase === "DOUBLE" ? "double" : "redouble";
    $("btn-double").textContent = word[0].toUpperCase() + word.slice(1);
    $("btn-nodouble").textContent = "No " + word;
  }
  $("btn-pass").disabled = !(turn && view.legal.includes("pass"));
  const legal = $("legal");
  legal.replaceChildren();
  if (turn && view.phase === "PLAY") {
    const moves = view.legal.filter((x) => x !== "pass");
    const hint = document.createElement("span");
    hint.textContent = moves.length ? `legal (${moves.length}):` : "nothing beats it: pass";
    legal.appendChild(hint);
    moves.slice(0, 40).forEach((m) => {
      const c = document.createElement("button");
      c.className = "chip";
      c.textContent = pretty(m);
      c.dataset.move = m;
      c.addEventListener("click", () => selectMove(m));
      legal.appendChild(c);
    });
    if (moves.length > 40) { const more = document.createElement("span"); more.textContent = `… ${moves.length - 40} more`; legal.appendChild(more); }
  }
}

function selectMove(move) {
  const hand = game.view.hands[game.view.seat];
  selected = new Set();
  const used = new Set();
  for (const c of move) {
    for (let i = 0; i < hand.length; i++) if (hand[i] === c && !used.has(i)) { used.add(i); selected.add(i); break; }
  }
  drawPlay();
}

async function send(action) {
  message("");
  try {
    game = await api("POST", `/api/games/${game.id}/action`, { action });
    selected = new Set();
    drawPlay();
  } catch (e) { message(e.message); }
}

async function newHand() {
  stopAuto();
  mode = "play";
  replay = null;
  $("replay-controls").classList.add("hidden");
  message("");
  selected = new Set();
  const body = { seat: +$("play-seat").value, vs: [$("play-vs1").value, $("play-vs2").value], seed: +$("play-seed").value, deal: +$("play-deal").value };
  try { game = await api("POST", "/api/games", body); drawPlay(); } catch (e) { message(e.message); }
}

// ---------------------------------------------------------------- replays and watching
function openReplay(data) {
  stopAuto();
  mode = "replay";
  game = null;
  selected = new Set();
  const meta = data.record.meta || {};
  const seat = [0, 1, 2].includes(meta.human_seat) ? meta.human_seat : 0;
  replay = { record: data.record, positions: data.positions, k: 0, seat };
  $("controls").classList.add("hidden");
  $("replay-controls").classList.remove("hidden");
  document.body.dataset.state = "replay";
  message("");
  drawReplay();
}

function drawReplay() {
  const n = replay.positions.length - 1;
  draw(replay.positions[replay.k], replay.seat);
  $("step").textContent = `${replay.k} / ${n}`;
  $("btn-prev").disabled = replay.k === 0; $("btn-first").disabled = replay.k === 0;
  $("btn-next").disabled = replay.k === n; $("btn-last").disabled = replay.k === n;
}

function stepTo(k) {
  if (!replay) return;
  replay.k = Math.max(0, Math.min(replay.positions.length - 1, k));
  drawReplay();
}

function stopAuto() { if (timer) { clearInterval(timer); timer = null; } }

function auto() {
  if (timer) { stopAuto(); return; }
  timer = setInterval(() => {
    if (!replay || replay.k >= replay.positions.length - 1) { stopAuto(); return; }
    stepTo(replay.k + 1);
  }, 600);
}

async function watch() {
  const body = { players: [0, 1, 2].map((s) => $(`watch-${s}`).value), seed: +$("watch-seed").value, deal: +$("watch-deal").value };
  try { openReplay(await api("POST", "/api/watch", body)); auto(); } catch (e) { message(e.message); }
}

async function listReplays() {
  const sel = $("replay-list");
  sel.replaceChildren();
  try {
    const r = await api("GET", "/api/replays");
    r.records.forEach((name) => { const o = document.createElement("option"); o.textContent = name; sel.appendChild(o); });
    if (!r.records.length) { const o = document.createElement("option"); o.textContent = r.dir ? "(no records)" : "(start with --replays DIR)"; o.disabled = true; sel.appendChild(o); }
  } catch (e) { message(e.message); }
}

async function openSaved() {
  const name = $("replay-list").value;
  try { openReplay(await api("GET", `/api/replays/${encodeURIComponent(name)}`)); } catch (e) { message(e.message); }
}

async function openFile(ev) {
  const f = ev.target.files[0];
  if (!f) return;
  try { openReplay(await api("POST", "/api/replay", JSON.parse(await f.text()))); } catch (e) { message(e.message); }
}

function tab(name) {
  document.querySelectorAll(".tab").forEach((t) => t.classList.toggle("active", t.dataset.tab === name));
  for (const s of ["play", "watch", "replay"]) $(`setup-${s}`).classList.toggle("hidden", s !== name);
  if (name === "replay") listReplays();
}

async function init() {
  try {
    const r = await api("GET", "/api/agents");
    document.querySelectorAll(".agent-select").forEach((sel) => {
      r.agents.forEach((a) => { const o = document.createElement("option"); o.textContent = a; if (a === "rule") o.selected = true; sel.appendChild(o); });
    });
  } catch (e) { message(e.message); }
  document.querySelectorAll(".tab").forEach((t) => t.addEventListener("click", () => tab(t.dataset.tab)));
  $("btn-new").addEventListener("click", newHand);
  $("btn-watch").addEventListener("click", watch);
  $("btn-open").addEventListener("click", openSaved);
  $("replay-file").addEventListener("change", openFile);
  document.querySelectorAll(".bid-btn").forEach((b) => b.addEventListener("click", () => send(b.dataset.action)));
  $("btn-double").addEventListener("click", () => send(game.view.phase === "DOUBLE" ? "double" : "redouble"));
  $("btn-nodouble").addEventListener("click", () => send("no"));
  $("btn-pass").addEventListener("click", () => send("pass"));
  $("btn-clear").addEventListener("click", () => { selected = new Set(); drawPlay(); });
  $("btn-play").addEventListener("click", () => {
    const hand = game.view.hands[game.view.seat];
    const cards = [...selected].sort((a, b) => a - b).map((i) => hand[i]).join("");
    if (!cards) { message("select cards first (click them), or pass"); return; }
    send(cards);
  });
  $("btn-first").addEventListener("click", () => stepTo(0));
  $("btn-prev").addEventListener("click", () => stepTo(replay.k - 1));
  $("btn-next").addEventListener("click", () => stepTo(replay.k + 1));
  $("btn-last").addEventListener("click", () => stepTo(replay.positions.length - 1));
  $("btn-auto").addEventListener("click", auto);
  document.body.dataset.ready = "1";
}

init();
