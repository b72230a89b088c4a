// The verification page: hashes a dropped file in the browser with the library's own
// WebAssembly (SHA-256 streamed, the ImagePHash of an image from the pixels the browser
// decoded), asks the server for exact and perceptual matches, and shows them. Audio and
// video are fingerprinted by the server, and only sent after the visitor agrees. Every
// value from the server is put on the page as text (textContent, attributes), never as HTML.
//
// Each match's record is proven in the server's transparency log here too (issue 27,
// docs/transparency-log.md), as `provenant verify` does: its proof bundle checked with
// the log's key, against the record's own entry from the entry bundle of its tile, and
// the served checkpoint proven to extend the bundle's (same root, or a consistency proof
// from the served tiles). The line says what was checked, or why not.
import {
  initWasm, simdSupported, createSha256, imagePHashFromPixels, isccImageCodeFromPixels,
  verifyProofBundle, verifyCheckpoint, verifyConsistency, proveConsistency, tileHashReader, tilePath, entriesPath,
  decodeEntryBundle, tileWidthAt, parseNote,
} from '/assets/provenant/browser.js';

const API = '/api/v1/sign-it';
/** The C2PA Soft Binding Resolution API of this server (issue 33). */
const C2PA_API = '/c2pa/v1';
/** At most this many perceptually matching files are looked up in full. */
const MAX_DETAILED = 10;
const $ = (id) => document.getElementById(id);

const ready = (async () => {
  const flavor = simdSupported ? 'simd' : 'scalar';
  const load = async (kernel) => {
    const res = await fetch(`/assets/provenant/${kernel}.${flavor}.wasm`);
    if (!res.ok) throw new Error(`the WebAssembly kernel ${kernel} did not load (${res.status})`);
    return res.arrayBuffer();
  };
  const [core, iscc] = await Promise.all([load('core'), load('iscc')]);
  await initWasm({ modules: { core, iscc }, flavor });
})();

function setStatus(text, isError = false) {
  const el = $('status');
  el.textContent = text;
  el.classList.toggle('error', isError);
}

const megabytes = (n) => `${(n / 1048576).toFixed(n < 10485760 ? 1 : 0)} MB`;

/** SHA-256 of the file, read as a stream, the progress bar following. */
async function sha256Of(file) {
  const hasher = createSha256();
  const bar = $('progress');
  $('file-name').textContent = file.name;
  $('progress-box').hidden = false;
  bar.value = 0;
  let done = 0;
  const reader = file.stream().getReader();
  for (;;) {
    const { done: end, value } = await reader.read();
    if (end) break;
    hasher.update(value);
    done += value.length;
    bar.value = file.size ? Math.floor((100 * done) / file.size) : 100;
  }
  bar.value = 100;
  return hasher.digestHex();
}

/**
 * The ImagePHash of an image as this browser decodes it (decisions.md 3: alpha over white)
 * and its ISCC Content-Code (issue 33: the soft binding a repository resolves), or null.
 */
async function imageFingerprint(file) {
  let bitmap;
  try {
    bitmap = await createImageBitmap(file, { colorSpaceConversion: 'none', premultiplyAlpha: 'none' });
  } catch {
    return null;
  }
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, bitmap.width, bitmap.height);
  ctx.drawImage(bitmap, 0, 0);
  const data = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data;
  bitmap.close();
  const pixels = new Uint8Array(data.buffer, data.byteOffset, data.length);
  let iscc = null;
  try {
    iscc = isccImageCodeFromPixels(pixels, canvas.width, canvas.height, 4).iscc;
  } catch {
    // no code (a picture too small): matching goes on without it
  }
  return { fp: imagePHashFromPixels(pixels, canvas.width, canvas.height, 4), iscc };
}

/**
 * The manifests a stripped copy's ISCC Content-Code finds through this server's Soft
 * Binding Resolution API (byBinding, GET), as verify-file's recovered_credentials would
 * list them (only ids: the state of each is in its store, downloadable).
 */
async function manifestsByBinding(iscc) {
  const value = btoa(iscc);
  const res = await fetch(`${C2PA_API}/matches/byBinding?alg=io.iscc.v0&value=${encodeURIComponent(value)}&maxResults=5`);
  if (!res.ok) return [];
  const body = await res.json().catch(() => null);
  return (body?.matches ?? []).map((m) => ({ manifest_id: m.manifestId, similarity: m.similarityScore }));
}

/** The recovered credentials (verify-file's recovered_credentials, or byBinding's ids) as cards. */
function showRecovered(recovered) {
  const list = $('recovered-list');
  list.replaceChildren(...recovered.map((r) => {
    const node = $('recovered-template').content.firstElementChild.cloneNode(true);
    const q = (sel) => node.querySelector(sel);
    q('.manifest-id').textContent = r.manifest_id;
    q('.action-hash').textContent = r.action_hash ?? 'see the manifest';
    q('.validation').textContent = r.validation_state === undefined ? `found by the ISCC soft binding${r.similarity === undefined ? '' : `, ${r.similarity}% similar`}` : `${r.validation_state.replace('_', ' ')} as stored${r.validation_codes.length ? ` (${r.validation_codes.join(', ')})` : ''}`;
    q('.binding').textContent = r.soft_binding_matches === undefined ? 'io.iscc.v0' : r.soft_binding_matches === null ? 'none to compare' : r.soft_binding_matches ? `matches this file (${r.soft_binding_distance} bits apart)` : `does not match this file (${r.soft_binding_distance} bits apart)`;
    q('.download').href = `${C2PA_API}/manifests/${encodeURIComponent(r.manifest_id)}`;
    return node;
  }));
  $('recovered').hidden = recovered.length === 0;
}

async function api(path, init) {
  const res = await fetch(`${API}${path}`, init);
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new Error(body?.message ?? `the server answered ${res.status}`);
  return body;
}

const verify = (hash) => api(`/verify?hash=${hash}`);

/**
 * How a perceptual match was found (matched_by), and for local features (issue 32) how
 * many matched and how much of this file they cover: the words of `provenant verify`.
 */
function matchedHow(m) {
  const by = m.matched_by === undefined ? '' : ` by ${m.matched_by}${m.pdq_distance === undefined ? '' : ` (distance ${m.pdq_distance})`}`;
  const checked = m.feature_inliers === undefined ? '' : `; confirmed by ${m.feature_inliers} matching local features covering ${Math.round(100 * (m.feature_coverage ?? 0))} % of this file`;
  return by + checked;
}

/** Full signatures (spec 2.1) of perceptual matches (spec 2.3), with their similarity; the exact file left out. */
async function detailsOf(reduced, exactHash) {
  const byFile = new Map();
  for (const m of reduced) if (m.file_hash !== exactHash && !byFile.has(m.file_hash)) byFile.set(m.file_hash, m);
  const out = [];
  for (const [fileHash] of [...byFile].slice(0, MAX_DETAILED)) {
    const { signatures } = await verify(fileHash);
    for (const s of signatures) {
      const match = reduced.find((m) => m.file_hash === fileHash && m.signer === s.signer);
      if (match) out.push({ signature: s, similarity: match.similarity, how: matchedHow(match) });
    }
  }
  return out;
}

const dateOf = (ms) => (ms == null ? '' : new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }));
const short = (hex) => (hex ? `${hex.slice(0, 12)}…` : '');

function rightsText(rights) {
  if (!rights) return 'None declared';
  const words = Object.entries(rights)
    .filter(([, v]) => v != null)
    .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${typeof v === 'object' ? `Custom (${v.Custom})` : v}`);
  return words.length ? words.join('; ') : 'None declared';
}

function integrityText(report) {
  if (!report) return 'Not checked (made outside the vault\'s Sign It page)';
  const issues = report.issues_found ?? [];
  const checks = `${report.checks_performed.length} checks (${report.checks_performed.join(', ')})`;
  if (issues.length === 0) return `${checks}: no issues`;
  return `${checks}: ${issues.map((i) => `${i.severity} ${i.check}: ${i.description}`).join('; ')}`;
}

const TILE_WIDTH = 256;
/** Times a record not yet in a checkpoint is looked up again, a second apart (a checkpoint comes each second). */
const LOG_RETRIES = 5;

async function logBytes(path) {
  const res = await fetch(path);
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}
const logText = async (path) => new TextDecoder().decode(await logBytes(path));
let logKey = null;

/** The record's proof of inclusion, verified here; the line to show. */
async function logLine(signature) {
  logKey ??= logText('/log/key').then((k) => k.trim());
  const vkey = await logKey;
  // /verify's log_index is null until a checkpoint covers the record: asked again meanwhile
  let known = signature.log_index;
  for (let attempt = 0; known === null && attempt < LOG_RETRIES; attempt++) {
    await new Promise((r) => setTimeout(r, 1000));
    known = (await verify(signature.file_hash)).signatures.find((s) => s.action_hash === signature.action_hash)?.log_index ?? null;
  }
  if (known === null) return 'Not in a checkpoint of the transparency log yet.';
  const res = await fetch(`${API}/proof?action_hash=${encodeURIComponent(signature.action_hash)}`);
  if (!res.ok) throw new Error(`the proof: ${res.status}`);
  const bundle = await res.text();
  const index = Number(/^c2sp\.org\/tlog-proof@v1\n(?:extra [^\n]*\n)?index (\d+)\n/.exec(bundle)?.[1] ?? NaN);
  if (!Number.isSafeInteger(index)) throw new Error('the proof bundle has no index');
  if (known !== undefined && known !== index) throw new Error(`the proof is of index ${index}, the answer said ${known}`);
  // the served checkpoint, fetched after the proof: the same tree or a larger one
  const servedNote = await logText('/log/checkpoint');
  const served = verifyCheckpoint(servedNote, { logKeys: [vkey] }).checkpoint;
  const tile = Math.floor(index / TILE_WIDTH);
  const width = Math.min(TILE_WIDTH, Math.max(tileWidthAt(served.size, 0, tile), (index % TILE_WIDTH) + 1));
  const entryBytes = decodeEntryBundle(await logBytes(`/log/${entriesPath(tile, width)}`))[index % TILE_WIDTH];
  if (entryBytes === undefined) throw new Error(`no entry ${index}`);
  const proven = verifyProofBundle(bundle, { entry: entryBytes }, { logKeys: [vkey] });
  const entry = JSON.parse(new TextDecoder().decode(entryBytes));
  if (entry.kind !== 'record' || entry.action_hash !== signature.action_hash || (entry.record && entry.record.file_hash !== signature.file_hash)) {
    throw new Error(`the log's entry ${index} is not this record`);
  }
  const tree = proven.checkpoint.checkpoint;
  if (tree.size > served.size) throw new Error('the proof is against a checkpoint newer than the served one');
  if (tree.size < served.size) {
    const reader = tileHashReader(served.size, { readTiles: (coords) => Promise.all(coords.map((c) => logBytes(`/log/${tilePath(c)}`))) });
    verifyConsistency(tree.size, served.size, await proveConsistency(tree.size, served.size, reader), tree.rootHash, served.rootHash);
  } else if (tree.rootHash.some((b, i) => b !== served.rootHash[i])) {
    throw new Error(`two different trees of size ${tree.size}`);
  }
  const others = parseNote(servedNote).signatures.length - 1;
  return `In the log at index ${index}, checkpoint ${tree.size} signed by ${proven.checkpoint.logSignature.name}` +
    (others > 0 ? `, with ${others} cosignature${others === 1 ? '' : 's'} (witnesses not checked here)` : '');
}

function card(signature, similarity, how = '') {
  const node = $('signature-template').content.firstElementChild.cloneNode(true);
  const q = (sel) => node.querySelector(sel);
  const name = signature.signer_display_name ?? signature.signer_username ?? short(signature.signer);
  const link = q('.signer-name');
  link.textContent = name;
  link.href = `/c/${encodeURIComponent(signature.signer)}`;
  if (signature.signer_profile_picture) {
    const img = q('.avatar');
    img.src = signature.signer_profile_picture;
    img.hidden = false;
  }
  q('.match').textContent = similarity === undefined ? 'Exact match (same SHA-256)' : `Perceptual match${similarity == null ? '' : `, ${similarity}% similar`}${how}`;
  node.dataset.match = similarity === undefined ? 'exact' : 'perceptual';
  q('.signed-at').textContent = dateOf(signature.signed_at);
  q('.intent').textContent = signature.intent;
  q('.ai').textContent = signature.ai_generation ?? 'Not declared';
  q('.rights').textContent = rightsText(signature.content_rights);
  if (signature.revoked) {
    node.classList.add('revoked');
    q('.revocation').textContent = `Revoked ${dateOf(signature.revoked_at)}${signature.revocation_reason ? `: ${signature.revocation_reason}` : ''}`;
    q('.revocation').classList.add('warn');
  } else q('.revocation').textContent = 'Active';
  const history = [];
  if (signature.supersedes) history.push(`amends signature ${short(signature.supersedes)}`);
  if (signature.superseded_by) history.push(`replaced by signature ${short(signature.superseded_by)}`);
  q('.history').textContent = history.length ? history.join('; ') : 'Original, not amended';
  q('.integrity').textContent = integrityText(signature.integrity_report);
  q('.file-hash').textContent = signature.file_hash;
  const log = q('.log');
  log.textContent = 'Checking the transparency log…';
  logLine(signature).then(
    (line) => { log.textContent = line; log.dataset.state = line.startsWith('In the log') ? 'verified' : 'absent'; },
    (err) => { log.textContent = `The log's proof did not verify: ${err.message}`; log.dataset.state = 'refused'; log.classList.add('error'); },
  );
  if (signature.comment) {
    q('.comment').textContent = signature.comment;
    q('.comment').hidden = false;
  }
  if (signature.contactable && !signature.revoked) {
    q('.contact').hidden = false;
    q('.contact-form').addEventListener('submit', (event) => sendContact(event, signature));
  }
  return node;
}

async function sendContact(event, signature) {
  event.preventDefault();
  const form = event.currentTarget;
  const status = form.querySelector('.contact-status');
  if (!form.reportValidity()) return;
  const fields = Object.fromEntries(new FormData(form));
  try {
    const answer = await api('/contact', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...fields, signer_agent_key: signature.signer, file_hash: signature.file_hash }),
    });
    status.textContent = answer.message;
    form.reset();
  } catch (err) {
    status.textContent = `Not sent: ${err.message}`;
  }
}

function show(exact, perceptual) {
  const list = $('result-list');
  list.replaceChildren(...exact.map((s) => card(s)), ...perceptual.map((m) => card(m.signature, m.similarity, m.how)));
  $('results').hidden = false;
  const n = exact.length + perceptual.length;
  setStatus(n === 0 ? 'No signatures found for this file.' : `${exact.length} exact and ${perceptual.length} perceptual match${perceptual.length === 1 ? '' : 'es'}.`);
}

function askToUpload(file) {
  return new Promise((resolve) => {
    $('consent-name').textContent = file.name;
    $('consent-size').textContent = megabytes(file.size);
    $('consent').hidden = false;
    const done = (yes) => {
      $('consent').hidden = true;
      $('consent-yes').onclick = $('consent-no').onclick = null;
      resolve(yes);
    };
    $('consent-yes').onclick = () => done(true);
    $('consent-no').onclick = () => done(false);
    $('consent-yes').focus();
  });
}

async function check(file) {
  $('results').hidden = true;
  $('recovered').hidden = true;
  $('consent').hidden = true;
  try {
    await ready;
    setStatus(`Hashing ${file.name} (${megabytes(file.size)})…`);
    const hash = await sha256Of(file);
    $('facts').hidden = false;
    $('sha256').textContent = hash;
    $('fingerprint').textContent = 'none';
    setStatus('Looking up exact matches…');
    const exact = (await verify(hash)).signatures;
    let reduced = [];
    let recovered = [];
    const kind = file.type.split('/')[0];
    if (kind === 'audio' || kind === 'video') {
      show(exact, []);
      if (await askToUpload(file)) {
        setStatus('Fingerprinting on the server…');
        const answer = await api('/verify-file', { method: 'POST', body: file });
        reduced = answer.signatures;
        recovered = answer.recovered_credentials ?? [];
        $('fingerprint').textContent = 'computed by the server';
      }
    } else {
      const found = await imageFingerprint(file);
      const fp = found?.fp;
      // a file that lost its credentials: the manifests its ISCC code finds (exact copies have their records above)
      if (found?.iscc && exact.length === 0) recovered = await manifestsByBinding(found.iscc);
      if (fp) {
        $('fingerprint').textContent = `${fp.hash_type} ${fp.hash_value.map((b) => b.toString(16).padStart(2, '0')).join('')}`;
        setStatus('Looking up perceptual matches…');
        reduced = (await api('/verify-fuzzy', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ bands: fp.bands, hash_value: fp.hash_value }),
        })).signatures;
      }
    }
    show(exact, await detailsOf(reduced, hash));
    showRecovered(recovered);
  } catch (err) {
    setStatus(`Could not check the file: ${err.message}`, true);
  } finally {
    $('progress-box').hidden = true;
  }
}

async function lookUp(hash) {
  try {
    $('facts').hidden = false;
    $('sha256').textContent = hash;
    show((await verify(hash)).signatures, []);
  } catch (err) {
    setStatus(`Could not look the hash up: ${err.message}`, true);
  }
}

const input = $('file');
input.addEventListener('change', () => input.files[0] && check(input.files[0]));
const drop = $('drop');
drop.addEventListener('dragover', (e) => {
  e.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  const file = e.dataTransfer?.files?.[0];
  if (file) check(file);
});

const preset = new URLSearchParams(location.search).get('hash');
if (preset && /^[0-9a-fA-F]{64}$/.test(preset)) lookUp(preset.toLowerCase());
ready.catch((err) => setStatus(`This page cannot hash files here: ${err.message}`, true));
