// Position setup: the draft (fields, hand, placements) goes to /api/position/write, which
// answers with sniff hint's text, the board, what is wrong and where each tile may go next.
// Its board, hand, hint and state are its own (the set-up section's elements only).
"use strict";
let draft = { hand: [], table: [] }, setupView = null;

const numbers = (id) => $(id).value.trim().split(/[\s,]+/).filter(Boolean).map(Number);

// Known lacks by clicking: per seat, a box for each pip value 0..6 it is known not to hold.
function drawLacks(lacks) {
  const players = Number($("p-players").value) || 2, box = $("p-lacks");
  box.innerHTML = "lacks:";
  for (let seat = 0; seat < players; seat++) {
    const group = document.createElement("span");
    group.className = "lacks-seat"; group.textContent = ` seat ${seat}`;
    for (let v = 0; v <= 6; v++) {
      const label = document.createElement("label"), input = document.createElement("input");
      input.type = "checkbox"; input.dataset.seat = seat; input.dataset.value = v;
      input.checked = Boolean(lacks && lacks[seat] && lacks[seat].includes(v));
      input.addEventListener("change", writeDraft);
      label.append(input, String(v)); group.appendChild(label);
    }
    box.appendChild(group);
  }
}

function readLacks() {
  const players = Number($("p-players").value) || 2, lacks = [];
  for (let seat = 0; seat < players; seat++) lacks.push([]);
  for (const input of document.querySelectorAll("#p-lacks input:checked")) {
    const seat = Number(input.dataset.seat);
    if (seat < players) lacks[seat].push(Number(input.dataset.value));
  }
  return lacks;
}

function readFields() {
  return { players: Number($("p-players").value), seat: Number($("p-seat").value), lacks: readLacks(),
    leader: Number($("p-leader").value), round: Number($("p-round").value),
    target: Number($("p-target").value), scores: numbers("p-scores"), sizes: numbers("p-sizes"),
    boneyard: Number($("p-boneyard").value), hand: draft.hand, table: draft.table };
}

function fillFields(d) {
  for (const key of ["players", "seat", "leader", "round", "target", "boneyard"]) $("p-" + key).value = d[key];
  $("p-scores").value = d.scores.join(" "); $("p-sizes").value = d.sizes.join(" ");
  drawLacks(d.lacks);
}

// The form's fields by the names the server gives a problem (``fields``) or an error.
const FIELDS = { players: "p-players", seat: "p-seat", leader: "p-leader", round: "p-round", target: "p-target",
  scores: "p-scores", sizes: "p-sizes", boneyard: "p-boneyard", lacks: "p-lacks", hand: "setup-hand", table: "setup-board" };
const FIELD_NAMES = { sizes: "hand sizes", hand: "the hand", table: "the table" };

function markFields(fields, problem) {
  for (const [name, id] of Object.entries(FIELDS)) {
    const bad = fields.includes(name), box = $(id);
    box.classList.toggle("invalid", bad);
    if (box.tagName !== "INPUT") continue;
    if (bad) box.setAttribute("aria-invalid", "true"); else box.removeAttribute("aria-invalid");
  }
  const named = fields.map((f) => FIELD_NAMES[f] || f).join(", ");
  $("p-problem").textContent = problem ? (named ? `${named}: ` : "") + problem.replace(/^position: /, "") : "";
  $("p-problem").classList.toggle("bad", Boolean(problem));
}

function showSetup(v) {
  setupView = v;
  draft = { hand: v.hand, table: v.table };
  $("p-text").value = v.text;
  markFields(v.fields || [], v.problem);
  if (!v.problem) $("p-problem").textContent = `ready: legal moves ${v.moves.join(", ")}`;
  setupStarted = true;
  drawBoard($("setup-board"), v.board);
  drawHand($("setup-hand"), v.hand, new Set(), () => {});
  drawPalette();
}

// A request the server refuses names its field first ("scores must be ..."): marked too.
function refused(error) {
  const name = Object.keys(FIELDS).find((f) => (error.message || "").startsWith(f + " "));
  markFields(name ? [name] : [], error.message);
}

let writing = Promise.resolve(), typing = null;
function writeDraft() {
  clearTimeout(typing);
  writing = writing.then(async () => {
    try { showSetup(await api("POST", "/api/position/write", readFields())); } catch (error) { refused(error); }
  });
  return writing;
}

function drawPalette() {
  const box = $("palette"); box.innerHTML = "";
  const used = new Set([...draft.hand, ...draft.table.map((p) => p[0])]);
  for (let a = 0; a <= 6; a++) for (let b = a; b <= 6; b++) {
    const tile = `${a}-${b}`;
    const where = draft.hand.includes(tile) ? "in the hand" : used.has(tile) ? "on the table" : "unused";
    const button = tileButton(tile, true, where, clickTile);
    if (used.has(tile)) button.classList.add("used");
    box.appendChild(button);
  }
}

function clickTile(tile) {
  $("p-prompt").innerHTML = "";
  const mode = document.querySelector("input[name=p-mode]:checked").value;
  if (mode === "hand") {
    if (draft.table.some((p) => p[0] === tile)) return;
    draft.hand = draft.hand.includes(tile) ? draft.hand.filter((t) => t !== tile) : [...draft.hand, tile];
    return writeDraft();
  }
  const ends = (setupView && setupView.fits[tile]) || [];
  if (!ends.length) { $("p-prompt").textContent = `${tile} fits no open end`; return; }
  const place = (end) => { draft.table = [...draft.table, [tile, end]]; writeDraft(); };
  if (ends.length === 1) return place(ends[0]);
  $("p-prompt").textContent = `${tile} on: `;
  for (const end of ends) {
    const button = document.createElement("button");
    button.type = "button"; button.textContent = end || "open"; button.addEventListener("click", () => place(end));
    $("p-prompt").appendChild(button);
  }
}

async function readText() {
  try {
    const v = await api("POST", "/api/position/read", { text: $("p-text").value });
    fillFields(v.draft); showSetup(v);
  } catch (error) { markFields([], error.message); }
}

function saveText() {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([$("p-text").value], { type: "text/plain" }));
  link.download = "position.txt"; link.click();
}

async function hintPosition() {
  $("p-hints").textContent = "";
  await writing;  // a field just edited is in the text first
  const budget = Number($("p-budget").value);
  try { showHint($("p-hints"), await api("POST", "/api/position/hint", { text: $("p-text").value, budget }, `searching ${budget} play-outs per move (the first hint on this machine waits for the search to compile, once)`), false); }
  catch (error) { fail(error); }
}

// "Set up this position" from a game or a replay: the text, read as sniff hint reads it.
function openSetup(text) {
  $("p-text").value = text;
  location.hash = "#/setup";
  readText();
}

let setupStarted = false;
document.addEventListener("mode", (e) => {
  if (e.detail === "setup" && !setupStarted) { setupStarted = true; if (!$("p-text").value) writeDraft(); }
});
$("p-players").addEventListener("change", () => drawLacks(readLacks()));
drawLacks([]);
// Every field of the form writes the position again (and the hint reads that text).
for (const input of document.querySelectorAll("#p-fields input")) {
  input.addEventListener("change", writeDraft);
  input.addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(writeDraft, 400); });
}
$("p-undo").addEventListener("click", () => { draft.table = draft.table.slice(0, -1); writeDraft(); });
$("p-read").addEventListener("click", readText);
$("p-save").addEventListener("click", saveText);
$("p-hint").addEventListener("click", hintPosition);
route();  // the last script: every mode's listener is in place
