// ddz-env web page: plain JS over the JSON API of agents/play/web/server.py. The server decides
// everything (legality, secrecy, scores, the words of a refused move); this file only draws views
// and sends what is clicked. Everything drawn from a response (names, records: records are shared
// files) is text: elements are made with createElement and filled with textContent, never with
// innerHTML and data.
"use strict";

const SUITS = ["\u2660", "\u2665", "\u2663", "\u2666"]; // drawn for looks: ranks alone matter
const SHOW = { T: "10", B: "BJ", R: "RJ" };               // the one card notation (ddz_env.view.spaced)
const $ = (id) => document.getElementById(id);

let mode = "play";        // "play" | "replay"
let game = null;          // {id, version, view, kept} of the hand being played (version: the server's, sent back
                          // with each action so that it refuses one chosen in a position since gone)
let replay = null;        // {record, positions, k, seat}
let selected = new Set(); // indices into the person's hand string
let timer = null;         // a replay's auto stepping
let playback = null;      // the agents' moves being shown one after another: {timer, finish}
let busy = false;         // an action is sent and its answer not in: the controls are shown but off until it is
let ticket = 0;           // bumped by each request that replaces what is shown: the answer of an older one is dropped

// ---------------------------------------------------------------- one click, one move (issue 62)
// A decision's controls (its buttons, the legal moves, the cards to pick) arm ARM_MS after they are drawn, and a
// click on them counts only if the press that made it (a pointer going down, or a key) began once they were armed.
// The server refuses a move chosen for an older version, but at the "instant" pace the answer to a click is
// drawn a few ms later, new controls where the old ones were: the second click of a double click landed on
// them and was sent as the next move (a "no bid" then a "double"), in a position the person had not seen.
// 400 ms: the second click of a double click comes 100-250 ms after the first (desktops count clicks up to
// 500 ms apart as one, but people rarely take that long), and nobody sees and aims at a control drawn less than
// ~250 ms ago (the quickest reaction to a thing shown, with no choice to make); 400 ms is past both, and a person
// reading a new position (a second or more) does not wait on it. Until then the controls are off, and look it
// (button:disabled; body data-armed="0"). The fresh-press rule takes the rest: a press held across the change, a
// second tap begun before the controls armed, a key held down to repeat are never taken for a move. At every
// pace: at "fast" and "normal" the agents' moves are shown first, but a move that needs no agent's answer
// (the landlord's redouble, then their lead) is followed by the next decision at once.
const ARM_MS = 400;
let arming = { key: null, at: Infinity, timer: null }; // the decision whose controls were drawn last; at: when they armed
let pointerAt = -Infinity;  // when the latest pointer press began (events' timeStamp: performance.now()'s clock)
const keysDown = new Map(); // the keys held down: code -> when it went down (a key's repeats keep its first time)

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
  const r = await fetch(path, opts);
  let data = null;
  try { data = await r.json(); } catch (e) { data = { error: `HTTP ${r.status}` }; }
  if (!r.ok) {
    const err = new Error(data && data.error ? data.error : `HTTP ${r.status}`);
    err.refusal = data && data.refusal;
    err.status = r.status;
    throw err;
  }
  return data;
}

// a message in plain words; a refused move's ruling (rule numbers) only as a detail to open
function message(text, refusal) {
  const box = $("message");
  box.replaceChildren();
  if (!text) return;
  box.append(el("span", "text", text));
  if (refusal && refusal.ruling) {
    const d = el("details", "ruling", el("summary", "", "ruling"), el("span", "", refusal.ruling));
    box.append(d);
  }
}

// an element with a class and children (strings become text nodes, never markup)
function el(tag, cls, ...children) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
}

function backs(n) { return Array.from({ length: Math.max(0, Number(n) || 0) }, () => el("span", "back")); }

function cardEl(rank, nth) {
  const d = el("div", "card");
  d.dataset.rank = rank;
  if (rank === "B" || rank === "R") {
    d.classList.add("joker");
    if (rank === "R") d.classList.add("red");
    // BJ / RJ as everywhere else; a star open (black) or filled (red) for looks
    d.append(el("span", "rank", SHOW[rank]), el("span", "suit", rank === "R" ? "\u2605" : "\u2606"));
    d.title = rank === "R" ? "RJ: the red (big) joker" : "BJ: the black (small) joker";
  } else {
    const suit = SUITS[nth % 4];
    if (suit === "\u2665" || suit === "\u2666") d.classList.add("red");
    if (rank === "T") d.classList.add("ten");
    d.append(el("span", "rank", SHOW[rank] || rank), el("span", "suit", suit));
  }
  return d;
}

function cardsEl(cards, small) {
  const box = el("div", "cards" + (small ? " small" : ""));
  const seen = {};
  for (const c of cards || "") { seen[c] = (seen[c] || 0); box.appendChild(cardEl(c, seen[c]++)); }
  return box;
}

function pretty(cards) { return [...cards].map((c) => SHOW[c] || c).join(" "); }

function isCards(name) { return /^[3-9TJQKA2BR]+$/.test(name); }

// a history entry as a person reads it (the server's words: "7 8 9 10 J", "no bid", "chose (secret)");
// a record opened from a file may be older or hand-made: then its name, cards spaced
function saidText(h) {
  if (typeof h.text === "string") return h.text;
  return h.phase === "PLAY" && isCards(h.name) ? pretty(h.name) : String(h.name);
}

function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

const PHASE_LABEL = { BID: "bidding", DOUBLE: "doubling", REDOUBLE: "redoubling", PLAY: "played" };

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

function badge(cls, text) { return el("span", "badge " + cls, text); }

function seatBox(box, view, s, me, said, acting) {
  box.replaceChildren();
  box.classList.toggle("turn", view.to_act === s && !view.over);
  box.classList.toggle("acting", acting === s);
  const name = el("div", "name", `seat ${s} · ${view.players[s]}`);
  const role = view.roles[s];
  if (role) name.appendChild(badge(role, role));
  if (view.doubled[s]) name.appendChild(badge("flag", "doubled"));
  if (s === view.landlord && view.redoubled) name.appendChild(badge("flag", "redoubled"));
  const count = el("span", "count", `${plural(view.cards_left[s], "card")} left`);
  count.dataset.seat = s;
  box.append(el("div", "head", name, count));
  if (s !== me) {
    // a hand shown face up (watching, replays, the end) is a labelled row, apart from what the seat played
    if (view.hands[s] !== null) { if (view.hands[s]) box.appendChild(el("div", "hand-row", el("span", "row-label", "hand"), cardsEl(view.hands[s], true))); }
    else box.appendChild(el("div", "backs", ...backs(view.cards_left[s])));
  }
  const w = el("div", "said");
  w.id = `said-${s}`;
  const a = said[s];
  if (a) {
    w.appendChild(el("span", "row-label", PHASE_LABEL[a.phase] || "said"));
    if (a.phase === "PLAY" && isCards(a.name)) w.appendChild(cardsEl(a.name, true));
    else w.appendChild(el("span", "word" + (a.name === "?" ? " secret" : ""), saidText(a)));
  }
  box.appendChild(w);
}

function statusText(view, me) {
  if (view.over) {
    const r = view.result;
    return r.void ? "Void hand: everyone passed" : `Hand over: seat ${r.winner} went out`;
  }
  if (busy && mode === "play") return `${view.phase} · sent · waiting for the other seats`;
  const who = view.to_act === me && mode === "play" ? "your" : `seat ${view.to_act}'s`;
  const what = { BID: "bid", DOUBLE: "double?", REDOUBLE: "redouble?", PLAY: view.to_beat ? `to beat ${pretty(view.to_beat.cards)} (seat ${view.to_beat.seat})` : "lead" }[view.phase];
  return `${view.phase} · ${who} turn · ${what}`;
}

// ---------------------------------------------------------------- the person's hand: rows of overlapping cards
// Each card shows its rank in its top-left corner; the next card covers only what lies right of `step`
// px, so every rank stays readable. Cards are positioned (style.css), so they paint in order: a raised
// (selected) card stays under its right neighbour and never hides that neighbour's rank. A hand too
// wide for one row at the smallest readable step wraps into rows of equal length.
const MIN_STEP = 28;

function layoutHand() {
  const hand = $("hand");
  if (!hand) return;
  const cards = [...hand.querySelectorAll(".card")];
  hand.querySelectorAll(".line").forEach((l) => l.remove());
  const n = cards.length;
  if (!n) return;
  const width = hand.clientWidth;
  const cw = cards[0].offsetWidth || 44;
  const fit = Math.max(1, Math.floor((width - cw) / MIN_STEP) + 1);
  const rows = Math.ceil(n / fit);
  const per = Math.ceil(n / rows);
  const step = per > 1 ? Math.min(cw + 6, (width - cw) / (per - 1)) : cw;
  hand.style.setProperty("--step", `${Math.floor(step)}px`);
  for (let r = 0; r < rows; r++) {
    const line = el("div", "line");
    cards.slice(r * per, (r + 1) * per).forEach((c) => line.appendChild(c));
    hand.appendChild(line);
  }
}

function drawHand(mine, view, me) {
  const hand = el("div", "hand");
  hand.id = "hand";
  const cards = cardsEl(view.hands[me] || "", false);
  [...cards.children].forEach((c, i) => {
    c.dataset.index = i;
    if (selected.has(i)) c.classList.add("selected");
    if (mode === "play") c.addEventListener("click", onMove(() => toggle(i))); // (pickable or not: drawControls)
    hand.appendChild(c);
  });
  mine.insertBefore(hand, mine.querySelector(".said"));
  layoutHand();
}

// `acting`: the seat whose move is being shown (lit); none once the hand is over (nobody is to act then)
function draw(view, me, acting) {
  if (view.over) acting = null;
  const said = lastSaid(view);
  const right = (me + 1) % 3, left = (me + 2) % 3;
  seatBox($("seat-right"), view, right, me, said, acting);
  seatBox($("seat-left"), view, left, me, said, acting);
  const mine = $("seat-me");
  seatBox(mine, view, me, me, said, acting);
  drawHand(mine, view, me);
  $("status").textContent = statusText(view, me);
  const bottom = $("bottom");
  bottom.replaceChildren();
  if (view.bottom !== null) bottom.appendChild(cardsEl(view.bottom, true));
  else bottom.append(...backs(3));
  drawStake(view.stake);
  const log = $("log");
  log.replaceChildren();
  view.history.forEach((h, i) => {
    const li = el("li", i === view.history.length - 1 ? "current" : "", `seat ${h.seat}: ${saidText(h)}`);
    log.appendChild(li);
  });
  drawResult(view);
  fitRows();
  document.body.dataset.phase = view.phase;
}

// the live stake, one line of words ("stake: bid 3 per farmer; seat 1 x 2 (doubled) = 6; 3 + 6 = 9"): where it
// wraps, its last equation stays whole (never "= 9" alone on a line): the sum and its value for the landlord (and
// a spectator), the last factor and the value for a farmer
function drawStake(st) {
  const box = $("stake");
  box.replaceChildren();
  if (!st) return;
  let head = "", tail = "";
  if (st.sum !== undefined && st.detail !== undefined) { head = `${st.detail}; `; tail = `${st.sum} = ${st.value}`; }
  else {
    const cut = st.how.lastIndexOf(" x ") + 1; // (0: no factor, the whole equation is the tail)
    head = st.how.slice(0, cut); tail = `${st.how.slice(cut)} = ${st.value}`;
  }
  if (head + tail !== st.text) { head = `${st.text}`; tail = ""; } // (a text of another shape: as it is)
  box.append(el("span", "", `stake: ${head}`, el("span", "eq", tail)));
}

// ---------------------------------------------------------------- a seat's rows of small cards
// What a seat played and its hand shown face up (watching, replays, the end) are rows of small overlapping
// cards inside the seat's box: each card `--sstep` px right of the last, the step shrunk to fit the box (on a
// 390 px phone a 12-card straight ran past it), never below what shows each card's rank and suit whole; a row
// too long at that step wraps into lines of equal length.
function fitRows() {
  for (const box of document.querySelectorAll(".seat .cards.small")) fitRow(box);
}

function fitRow(box) {
  const cards = [...box.querySelectorAll(".card")];
  const seat = box.closest(".seat"), row = box.parentElement;
  if (!cards.length || !seat || !row) return;
  box.classList.remove("lines");
  row.classList.remove("stacked");
  box.style.removeProperty("--sstep");
  box.querySelectorAll(".line").forEach((l) => l.remove());
  cards.forEach((c) => box.appendChild(c));
  const px = (e, ...props) => { const cs = getComputedStyle(e); return props.reduce((t, p) => t + (parseFloat(cs[p]) || 0), 0); };
  const room = seat.clientWidth - px(seat, "paddingLeft", "paddingRight")
    - px(row, "paddingLeft", "paddingRight", "borderLeftWidth", "borderRightWidth");
  const label = row.querySelector(".row-label");
  const beside = label ? label.getBoundingClientRect().width + px(label, "marginLeft", "marginRight") : 0;
  const cw = cards[0].getBoundingClientRect().width;
  if (room - beside < cw) return; // (not laid out)
  const natural = parseFloat(getComputedStyle(box).getPropertyValue("--sstep")) || cw;
  // the least step that leaves each card's corner (its rank, the suit under it) in view
  let least = 0;
  for (const c of cards) {
    const left = c.getBoundingClientRect().left;
    for (const part of c.querySelectorAll(".rank, .suit")) least = Math.max(least, part.getBoundingClientRect().right - left);
  }
  least = Math.min(natural, Math.ceil(least));
  const n = cards.length;
  const fitIn = (width, step) => Math.max(1, Math.floor((width - cw) / step) + 1);
  let width = room - beside;
  // beside its label at the usual step if it fits there; else the label above, the row as wide as the box, the
  // step shrunk only as far as it must be (never below `least`), then lines
  if (label && fitIn(width, natural) < n) { row.classList.add("stacked"); width = room; }
  const fit = fitIn(width, least);
  const lines = Math.ceil(n / fit);
  const per = Math.ceil(n / lines);
  const step = per > 1 ? Math.min(natural, (width - cw) / (per - 1)) : natural;
  box.style.setProperty("--sstep", `${Math.floor(step)}px`);
  box.classList.add("lines");
  for (let r = 0; r < lines; r++) {
    const line = el("div", "line");
    cards.slice(r * per, (r + 1) * per).forEach((c) => line.appendChild(c));
    box.appendChild(line);
  }
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
  if (r.void) box.append("All three passed the bid (R4); nobody scores.");
  else {
    const extra = [["bombs", r.bombs], ["rockets", r.rockets]].map(([k, v]) => `${k} ${v}`).join(", ")
      + (r.spring ? ", spring" : "") + (r.anti_spring ? ", anti-spring" : "");
    const table = el("table", "", el("tr", "", ...["seat", "role", "double", "multiplier", "score"].map((h) => el("th", "", h))));
    for (const s of [0, 1, 2]) {
      const role = s === r.landlord ? "landlord" : "farmer";
      const dbl = s === r.landlord ? (r.redoubled ? "redoubled" : "") : (r.doubled[s] ? "doubled" : "");
      const exp = s === r.landlord ? "" : `2^${r.exponents[s]}`;
      const score = el("td", (r.scores[s] > 0 ? "win" : "loss") + " score", `${r.scores[s] > 0 ? "+" : ""}${r.scores[s]}`);
      score.dataset.seat = s;
      table.append(el("tr", "", el("td", "who", `seat ${s} · ${view.players[s]}`), el("td", "", role), el("td", "", dbl),
        el("td", "", exp), score));
    }
    box.append(el("div", "rule", `R19: a farmer scores bid × 2^n, the landlord the opposite of their sum (bid ${r.bid}, ${extra})`), table);
  }
  if (mode === "play" && game) drawKept(box);
}

// the hand just played: where the server kept it, and the buttons to replay or download it
function drawKept(box) {
  const k = game.kept;
  let where = "This hand is not kept on the server (it was started with --no-save): download it to keep it.";
  if (k && k.name) where = `Kept on the server as ${k.name} (in ${k.dir}/): the Replays tab lists it.`;
  else if (k && k.error) where = `${k.error[0].toUpperCase()}${k.error.slice(1)}.`;
  const again = el("button", "", "Replay this hand");
  again.id = "btn-replay-hand";
  again.addEventListener("click", replayThisHand);
  const dl = el("a", "button", "Download record");
  dl.id = "dl-hand";
  dl.href = `/api/games/${encodeURIComponent(game.id)}/record?download=1`;
  dl.setAttribute("download", (k && k.name) || "hand.json");
  const kept = el("div", "kept", el("span", "", where), el("div", "row", again, dl));
  kept.id = "kept";
  box.append(kept);
}

// the decision shown, if it is the person's: "game@version" (a hand's version names one of its positions)
function decisionKey() {
  if (mode !== "play" || game === null || playback || game.version === null) return null;
  return game.view.your_turn && !game.view.over ? `${game.id}@${game.version}` : null;
}

// the controls of decision `key` are drawn: they arm ARM_MS from now (and are drawn again then)
function arm(key) {
  clearTimeout(arming.timer);
  const a = { key, at: Infinity, timer: null, drawn: performance.now() };
  a.timer = setTimeout(() => {
    a.at = performance.now();
    a.timer = null;
    // (how long after they were drawn: read by the browser test, whose own observer a busy machine delays)
    document.body.dataset.armWait = (a.at - a.drawn).toFixed(1);
    if (arming === a && decisionKey() === key && !busy) drawControls();
  }, ARM_MS);
  arming = a;
}

function armed() { return arming.key !== null && arming.key === decisionKey() && arming.at !== Infinity; }

// an event's time on performance.now()'s clock (every current browser's timeStamp; else now)
function stamp(e) { return e.timeStamp > 0 && e.timeStamp <= performance.now() + 1 ? e.timeStamp : performance.now(); }

// whether a click on a decision's control is the person's choice on those controls: they are armed, and the press
// that made the click began after they armed (a pointer's press; from the keyboard, no key held since before). A
// click with no press behind it (assistive technology) counts once the controls are armed.
function pressedSinceArmed(e) {
  if (!armed()) return false;
  if (e.pointerType || e.detail > 0) return pointerAt >= arming.at;
  for (const t of keysDown.values()) if (t < arming.at) return false;
  return true;
}

// a decision control's click handler: `fn` runs only for a click pressedSinceArmed
function onMove(fn) { return (e) => { if (pressedSinceArmed(e)) fn(e); }; }

// whether the person may act now: their turn, shown (no agents' moves being played back), armed, no action in flight
function canAct() {
  return mode === "play" && game !== null && !playback && !busy && game.view.your_turn && !game.view.over && armed();
}

function toggle(i) {
  if (!canAct() || game.view.phase !== "PLAY") return;
  if (selected.has(i)) selected.delete(i); else selected.add(i);
  drawPlay();
}

function drawPlay() {
  const view = game.view;
  const playing = playback !== null;
  const last = view.history[view.history.length - 1];
  draw(view, view.seat, playing && last ? last.seat : null);
  drawControls();
}

// the person's controls for game.view: shown on their turn, off until armed (ARM_MS after a decision's are first
// drawn); while an action is in flight still shown (the page does not jump) but off, and a line says the page
// waits: a second click or tap would otherwise be sent as the next move, in a position the person has not seen yet
function drawControls() {
  const view = game.view;
  const playing = playback !== null;
  const last = view.history[view.history.length - 1];
  const turn = view.your_turn && !playing;
  const key = turn && !busy ? decisionKey() : null;
  const drawn = key !== null && key !== arming.key; // a new decision's controls: armed ARM_MS from the end of this
  const live = turn && !busy && !drawn && armed();
  document.body.dataset.armed = live ? "1" : "0";
  document.body.dataset.state = playing ? "agents" : (busy ? "sending" : (view.over ? "over" : (turn ? "your-turn" : "waiting")));
  document.body.dataset.game = game.id;
  $("status").textContent = statusText(view, view.seat);
  $("agents-bar").classList.toggle("hidden", !playing);
  if (playing && last) $("acting").textContent = `seat ${last.seat} · ${view.players[last.seat]}: ${saidText(last)}`;
  $("sending").classList.toggle("hidden", !busy);
  $("controls").classList.toggle("hidden", !turn);
  $("controls").setAttribute("aria-busy", busy ? "true" : "false");
  $("bid-buttons").classList.toggle("hidden", !(turn && view.phase === "BID"));
  $("double-buttons").classList.toggle("hidden", !(turn && (view.phase === "DOUBLE" || view.phase === "REDOUBLE")));
  $("play-buttons").classList.toggle("hidden", !(turn && view.phase === "PLAY"));
  document.querySelectorAll(".bid-btn").forEach((b) => { b.disabled = !(live && view.legal.includes(b.dataset.action === "pass" ? "bid pass" : b.dataset.action)); });
  if (turn && (view.phase === "DOUBLE" || view.phase === "REDOUBLE")) {
    const word = view.phase === "DOUBLE" ? "double" : "redouble";
    $("btn-double").textContent = word[0].toUpperCase() + word.slice(1);
    $("btn-nodouble").textContent = "No " + word;
  }
  for (const id of ["btn-double", "btn-nodouble", "btn-play", "btn-clear"]) $(id).disabled = !live;
  $("btn-pass").disabled = !(live && view.legal.includes("pass"));
  document.querySelectorAll("#hand .card").forEach((c) => c.classList.toggle("pickable", live && view.phase === "PLAY"));
  drawLegal(view, turn && view.phase === "PLAY", live);
  if (drawn) arm(key); // (last: they are all drawn by now)
}

// ---------------------------------------------------------------- the legal moves, by kind
// A lead of 20 cards has ~90 legal moves: as chips they took 8 rows on a phone. They are grouped by kind (the
// server's words: singles, pairs, straights...), one button per kind with its count; a kind's button shows its
// moves as chips (all of them), a second press hides them. Following a move, the kind that can answer it (the
// first listed) is open; leading, none is until the person picks one. A chip picks its cards in the hand.
let legalOpen = { key: null, kind: null }; // the kind shown, and the position ("game@version") it was picked in

function legalKinds(view) {
  const kinds = new Map(); // kind -> its moves, in the server's order (the move table's: singles first)
  view.legal.forEach((m, i) => {
    if (m === "pass") return;
    const k = (view.legal_kinds && view.legal_kinds[i]) || "moves";
    if (!kinds.has(k)) kinds.set(k, []);
    kinds.get(k).push(m);
  });
  return kinds;
}

function drawLegal(view, shown, live) {
  const legal = $("legal");
  legal.replaceChildren();
  if (!shown) return;
  const kinds = legalKinds(view);
  const n = [...kinds.values()].reduce((t, ms) => t + ms.length, 0);
  if (!n) { legal.appendChild(el("span", "", "nothing beats it: pass")); return; }
  const here = `${game.id}@${game.version}`;
  if (legalOpen.key !== here) legalOpen = { key: here, kind: view.to_beat ? [...kinds.keys()][0] : null };
  const open = kinds.has(legalOpen.kind) ? legalOpen.kind : null;
  const bar = el("div", "kinds", el("span", "", `legal moves (${n}):`));
  for (const [k, ms] of kinds) {
    const b = el("button", "kind", `${k} `, el("span", "n", ms.length));
    b.dataset.kind = k;
    b.setAttribute("aria-expanded", k === open ? "true" : "false");
    b.setAttribute("aria-controls", "legal-chips");
    b.addEventListener("click", () => { legalOpen = { key: here, kind: k === open ? null : k }; drawControls(); });
    bar.appendChild(b);
  }
  legal.appendChild(bar);
  if (open === null) return;
  const chips = el("div", "chips");
  chips.id = "legal-chips";
  chips.setAttribute("aria-label", open);
  for (const m of kinds.get(open)) {
    const c = el("button", "chip", pretty(m));
    c.dataset.move = m;
    c.disabled = !live;
    c.addEventListener("click", onMove(() => selectMove(m)));
    chips.appendChild(c);
  }
  legal.appendChild(chips);
}

function selectMove(move) {
  if (!canAct()) return;
  const hand = game.view.hands[game.view.seat];
  selected = new Set();
  const used = new Set();
  for (const c of move) {
    for (let i = 0; i < hand.length; i++) if (hand[i] === c && !used.has(i)) { used.add(i); selected.add(i); break; }
  }
  drawPlay();
}

// ---------------------------------------------------------------- the agents' moves, one after another
function speedMs() { return Number($("speed").value) || 0; }

function stopPlayback() {
  if (playback) { clearTimeout(playback.timer); playback = null; }
}

// show a game answer: its steps (the views after each action since the last answer) one after another,
// `speed` ms apart, then the view on which the person acts; "instant" or Skip shows the last at once
function showSteps(resp) {
  stopPlayback();
  const steps = resp.steps && resp.steps.length ? resp.steps : [resp.view];
  const finish = () => {
    if (playback) clearTimeout(playback.timer);
    playback = null;
    game = { id: resp.id, version: resp.version, view: resp.view, kept: resp.kept };
    drawPlay();
  };
  const delay = speedMs();
  if (delay === 0 || steps.length === 1) { finish(); return; }
  let i = 0;
  playback = { timer: null, finish };
  // (a step's position is gone by the time it is shown: no version, and canAct is false while it plays back)
  const show = () => { game = { id: resp.id, version: null, view: steps[i], kept: null }; drawPlay(); };
  const next = () => {
    i += 1;
    if (i >= steps.length - 1) { finish(); return; }
    show();
    playback.timer = setTimeout(next, delay);
  };
  show();
  playback.timer = setTimeout(next, delay);
}

function skip() { if (playback) playback.finish(); }

// send one action, naming the version of the position it was chosen in. The controls are off until the answer
// is in, so a second click (a double click, a tap while the agents think) sends nothing, and the next decision's
// until they arm (ARM_MS), so it does not land on those either; the server refuses
// any action that still names an older version (another tab played first): then the hand is shown as it is
async function send(action) {
  if (!canAct()) return;
  message("");
  const { id, version } = game;
  const mine = ++ticket;
  busy = true;
  drawControls();
  let resp = null, err = null;
  try { resp = await api("POST", `/api/games/${encodeURIComponent(id)}/action`, { action, version }); }
  catch (e) { err = e; }
  if (mine !== ticket) return; // a new hand or a replay was opened meanwhile: this answer is no longer shown
  busy = false;
  if (!err) { selected = new Set(); showSteps(resp); return; }
  message(err.message, err.refusal);
  if (err.status !== 409) { drawControls(); return; }
  selected = new Set();
  try { resp = await api("GET", `/api/games/${encodeURIComponent(id)}`); } catch (e) { drawControls(); return; }
  if (mine === ticket) showSteps(resp);
}

async function newHand() {
  stopAuto();
  stopPlayback();
  const mine = ++ticket; // an action still in flight is for the hand left: its answer is dropped
  busy = false;
  mode = "play";
  replay = null;
  $("replay-controls").classList.add("hidden");
  message("");
  selected = new Set();
  const body = { seat: +$("play-seat").value, vs: [$("play-vs1").value, $("play-vs2").value], seed: +$("play-seed").value, deal: +$("play-deal").value };
  try {
    const resp = await api("POST", "/api/games", body);
    if (mine === ticket) showSteps(resp); // (a second click's hand replaces the first's)
  } catch (e) { if (mine === ticket) message(e.message); }
}

// ---------------------------------------------------------------- replays and watching
function openReplay(data) {
  stopAuto();
  stopPlayback();
  ticket++; // an action still in flight: its answer would draw the hand over the replay
  busy = false;
  mode = "replay";
  document.body.dataset.armed = "0";
  game = null;
  selected = new Set();
  const meta = data.record.meta || {};
  const seat = [0, 1, 2].includes(meta.human_seat) ? meta.human_seat : 0;
  replay = { record: data.record, positions: data.positions, k: 0, seat };
  $("controls").classList.add("hidden");
  $("agents-bar").classList.add("hidden");
  $("legal").replaceChildren();
  $("replay-controls").classList.remove("hidden");
  document.body.dataset.state = "replay";
  message("");
  drawReplay();
}

function drawReplay() {
  const n = replay.positions.length - 1;
  const view = replay.positions[replay.k];
  const last = view.history[view.history.length - 1];
  draw(view, replay.seat, replay.k > 0 && last ? last.seat : null);
  $("step").textContent = `${replay.k} / ${n}`;
  $("btn-prev").disabled = replay.k === 0; $("btn-first").disabled = replay.k === 0;
  $("btn-next").disabled = replay.k === n; $("btn-last").disabled = replay.k === n;
  $("btn-auto").textContent = timer ? "stop" : "auto";
  document.body.dataset.replayEnd = replay.k === n ? "1" : "0";
}

function stepTo(k) {
  if (!replay) return;
  replay.k = Math.max(0, Math.min(replay.positions.length - 1, k));
  drawReplay();
}

function stopAuto() {
  if (timer) { clearTimeout(timer); timer = null; }
  $("btn-auto").textContent = "auto";
}

// step forward at the agents' pace ("instant": straight to the end)
function auto() {
  if (timer) { stopAuto(); return; }
  if (!replay) return;
  if (replay.k >= replay.positions.length - 1) stepTo(0);
  const delay = speedMs();
  if (delay === 0) { stepTo(replay.positions.length - 1); return; }
  const tick = () => {
    if (!replay || replay.k >= replay.positions.length - 1) { timer = null; if (replay) drawReplay(); return; }
    timer = setTimeout(tick, delay);
    stepTo(replay.k + 1);
  };
  timer = setTimeout(tick, delay);
  drawReplay();
}

// the server plays a watched hand off the request path: its id at once, then the hand read until it is over
async function watch() {
  const body = { players: [0, 1, 2].map((s) => $(`watch-${s}`).value), seed: +$("watch-seed").value, deal: +$("watch-deal").value };
  const mine = ++ticket; // a hand or replay opened meanwhile wins: this one is then not shown
  try {
    let r = await api("POST", "/api/watch", body);
    while (!r.done) {
      if (mine !== ticket) return;
      message(`The agents are playing the hand (${plural(r.moves, "move")} so far)…`);
      await new Promise((ok) => setTimeout(ok, 150));
      r = await api("GET", `/api/watch/${encodeURIComponent(r.id)}`);
    }
    if (mine === ticket) { openReplay(r); auto(); }
  } catch (e) { if (mine === ticket) message(e.message); }
}

async function replayThisHand() {
  try { openReplay(await api("GET", `/api/games/${encodeURIComponent(game.id)}/replay`)); } catch (e) { message(e.message); }
}

async function listReplays() {
  const sel = $("replay-list");
  const hint = $("replay-hint");
  sel.replaceChildren();
  try {
    const r = await api("GET", "/api/replays");
    const group = (label, names, source) => {
      if (!names.length) return;
      const g = el("optgroup");
      g.label = label;
      names.forEach((name) => { const o = el("option", "", name); o.value = `${source}/${name}`; o.title = name; g.appendChild(o); });
      sel.appendChild(g);
    };
    group(`hands played here (${r.kept_dir}/)`, r.kept || [], "kept");
    group(`--replays folder (${r.dir}/)`, r.records || [], "replays");
    const none = !(r.kept || []).length && !(r.records || []).length;
    sel.disabled = none;
    $("btn-open").disabled = none;
    const where = [];
    if (r.kept_dir) where.push(`the hands you play here are kept in ${r.kept_dir}/ once over`);
    else where.push("this server keeps no hands (started with --no-save)");
    where.push(r.dir ? `${r.dir}/ (--replays) holds no records` : "the server's --replays DIR adds a folder of records (evaluate.py --save-replays)");
    hint.textContent = `No saved hands yet: ${where.join("; ")}. You can also open a record file.`;
    hint.classList.toggle("hidden", !none);
    showChosen();
  } catch (e) { message(e.message); }
}

// the chosen record's name: the menu's title, and in full on a line under it where the menu cuts it (a menu shows
// one line: a long name on a phone lost its end, the seed, deal and seat of a kept hand)
function showChosen() {
  const sel = $("replay-list"), line = $("replay-name");
  const o = sel.selectedOptions[0];
  const name = o ? o.textContent : "";
  sel.title = name;
  line.textContent = name;
  line.classList.toggle("hidden", !name || shownWhole(sel, name));
}

// whether `text` fits in the box of menu `sel` (its padding and arrow left out), in its font
function shownWhole(sel, text) {
  const cs = getComputedStyle(sel);
  if (!sel.clientWidth) return true; // (not shown: the tab is closed)
  shownWhole.canvas = shownWhole.canvas || document.createElement("canvas");
  const ctx = shownWhole.canvas.getContext("2d");
  ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
  const room = sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 24; // (24 px: the arrow)
  return ctx.measureText(text).width <= room;
}

async function openSaved() {
  const value = $("replay-list").value;
  if (!value) return;
  const cut = value.indexOf("/");
  const source = value.slice(0, cut), name = value.slice(cut + 1);
  try { openReplay(await api("GET", `/api/${source}/${encodeURIComponent(name)}`)); } catch (e) { message(e.message); }
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
      r.agents.forEach((a) => { const o = el("option", "", a); if (a === "rule") o.selected = true; sel.appendChild(o); });
    });
  } catch (e) { message(e.message); }
  const speed = $("speed");
  let saved = null;
  try { saved = localStorage.getItem("ddz-speed"); } catch (e) { /* storage off: the default pace */ }
  if (saved !== null && [...speed.options].some((o) => o.value === saved)) speed.value = saved;
  speed.addEventListener("change", () => { try { localStorage.setItem("ddz-speed", speed.value); } catch (e) { /* not kept */ } });
  document.querySelectorAll(".tab").forEach((t) => t.addEventListener("click", () => tab(t.dataset.tab)));
  $("btn-new").addEventListener("click", newHand);
  $("btn-watch").addEventListener("click", watch);
  $("btn-open").addEventListener("click", openSaved);
  $("replay-file").addEventListener("change", openFile);
  $("replay-list").addEventListener("change", showChosen);
  $("btn-skip").addEventListener("click", skip);
  // the presses a click on a decision's control is judged by (pressedSinceArmed); capture: before any handler
  window.addEventListener("pointerdown", (e) => { pointerAt = stamp(e); }, true);
  window.addEventListener("keydown", (e) => { if (!keysDown.has(e.code)) keysDown.set(e.code, stamp(e)); }, true);
  // (a key is let go after the click its release makes, Space's, has been judged)
  window.addEventListener("keyup", (e) => { setTimeout(() => keysDown.delete(e.code), 0); }, true);
  window.addEventListener("blur", () => keysDown.clear());
  document.querySelectorAll(".bid-btn").forEach((b) => b.addEventListener("click", onMove(() => send(b.dataset.action))));
  $("btn-double").addEventListener("click", onMove(() => send(game.view.phase === "DOUBLE" ? "double" : "redouble")));
  $("btn-nodouble").addEventListener("click", onMove(() => send("no")));
  $("btn-pass").addEventListener("click", onMove(() => send("pass")));
  $("btn-clear").addEventListener("click", onMove(() => { selected = new Set(); drawPlay(); }));
  $("btn-play").addEventListener("click", onMove(() => {
    const hand = game.view.hands[game.view.seat];
    const cards = [...selected].sort((a, b) => a - b).map((i) => hand[i]).join("");
    if (!cards) { message("Select cards first (tap them), or pass."); return; }
    send(cards);
  }));
  $("btn-first").addEventListener("click", () => { stopAuto(); stepTo(0); });
  $("btn-prev").addEventListener("click", () => { stopAuto(); stepTo(replay.k - 1); });
  $("btn-next").addEventListener("click", () => { stopAuto(); stepTo(replay.k + 1); });
  $("btn-last").addEventListener("click", () => { stopAuto(); stepTo(replay.positions.length - 1); });
  $("btn-auto").addEventListener("click", auto);
  let resized = null;
  window.addEventListener("resize", () => { clearTimeout(resized); resized = setTimeout(() => { layoutHand(); fitRows(); showChosen(); }, 60); });
  document.body.dataset.ready = "1";
}

init();
