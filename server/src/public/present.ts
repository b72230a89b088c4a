// Answers of the public surfaces (spec 2.6, 4.6, 4.13, 4.14; decisions.md 9): the creator
// profile as JSON and as a page, the content rights of a file, the badge as SVG and JSON,
// and the contact relay's one answer. Every value from a signer or a request that reaches
// HTML or SVG goes through escapeMarkup.
import { didFromAgentKey, type ContentRights, type License } from 'provenant';
import { chainHeads, declaredRights, type Creator, type FileRights } from '../domain/creators.js';
import { publicSignature, publicSignatures } from '../signit/present.js';
import type { StoredSignature } from '../store/index.js';
import type { BadgeOptions } from './schema.js';

/**
 * Text as HTML or XML character data or attribute value: the five markup characters
 * as entities, and what XML 1.0 cannot hold at all (C0 controls but tab and line
 * breaks, lone surrogates, U+FFFE/U+FFFF) dropped, so an SVG stays well-formed.
 */
export function escapeMarkup(value: unknown): string {
  return String(value)
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|\p{Cs}/gu, '')
    .replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// ---------------------------------------------------------------- creator (spec 2.6)

const licenseName = (license: License | null | undefined): string | null =>
  license === null || license === undefined ? null : typeof license === 'string' ? license : 'Custom';

/** Spec 2.6: creator, stats and signatures, each amend chain once by its latest signature, newest first. */
export function creatorAnswer(creator: Creator) {
  const heads = chainHeads(creator.signatures);
  const active = heads.filter((s) => s.revocation === null);
  const byIntent: Record<string, number> = {};
  const byLicense: Record<string, number> = {};
  for (const s of heads) {
    byIntent[s.record.intent] = (byIntent[s.record.intent] ?? 0) + 1;
    const license = licenseName(s.record.content_rights?.license);
    if (license !== null) byLicense[license] = (byLicense[license] ?? 0) + 1;
  }
  const oldest = creator.signatures.reduce<number | null>((min, s) => (min === null || s.record.signed_at < min ? s.record.signed_at : min), null);
  const signatures = publicSignatures(heads).reverse();
  return {
    creator: {
      agent_key: creator.agentKey,
      did: didFromAgentKey(creator.agentKey),
      member_since: oldest,
      contactable: active.some((s) => s.record.content_rights?.contact_preference === 'AllowContactRequests'),
    },
    stats: { total: heads.length, active: active.length, revoked: heads.length - active.length, by_intent: byIntent, by_license: byLicense },
    signatures,
  };
}

type CreatorAnswer = ReturnType<typeof creatorAnswer>;

const when = (ms: number | null): string => (ms === null ? 'never' : new Date(ms).toISOString().slice(0, 10));

function rightsText(rights: ContentRights | null | undefined): string {
  if (!rights) return 'none declared';
  const parts = Object.entries(rights)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${typeof v === 'string' ? v : `Custom (${(v as { Custom: string }).Custom})`}`);
  return parts.length ? parts.join('; ') : 'none declared';
}

/** The shell of the server's own pages: the stylesheet, no script unless named. */
export function pageShell(title: string, body: string, script?: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeMarkup(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/page.css">
${script ? `<script type="module" src="${escapeMarkup(script)}"></script>\n` : ''}</head>
<body>
<header class="site"><a href="/">Provenant</a></header>
<main>
${body}
</main>
</body>
</html>
`;
}

/** The human page of GET /creator/:id (and /c/:id): the public profile and the signatures. */
export function creatorHtml(answer: CreatorAnswer, profile: { name: string | null; picture: string | null }): string {
  const c = answer.creator;
  const heading = profile.name ?? 'Creator';
  const rows = answer.signatures
    .map(
      (s) => `<li class="sig${s.revoked ? ' revoked' : ''}">
<p><span class="label">File</span> <a href="/?hash=${escapeMarkup(s.file_hash)}"><code>${escapeMarkup(s.file_hash)}</code></a></p>
<p><span class="label">Signed</span> ${escapeMarkup(when(s.signed_at))} &middot; ${escapeMarkup(s.intent)} &middot; AI: ${escapeMarkup(s.ai_generation ?? 'not declared')}</p>
<p><span class="label">Rights</span> ${escapeMarkup(rightsText(s.content_rights))}</p>
${pdqLine(s.pdq_hash)}${s.comment ? `<p class="note">${escapeMarkup(s.comment)}</p>` : ''}${s.revoked ? `<p class="warn">Revoked ${escapeMarkup(when(s.revoked_at as number | null))}${s.revocation_reason ? `: ${escapeMarkup(s.revocation_reason)}` : ''}</p>` : ''}
</li>`,
    )
    .join('\n');
  const stats = answer.stats;
  return pageShell(
    `${heading} on Provenant`,
    `<section class="card creator">
${profile.picture ? `<img class="avatar" src="${escapeMarkup(profile.picture)}" alt="" width="64" height="64">` : ''}
<h1>${escapeMarkup(heading)}</h1>
<p><span class="label">Agent key</span> <code class="wrap">${escapeMarkup(c.agent_key)}</code></p>
<p><span class="label">DID</span> <code class="wrap">${escapeMarkup(c.did ?? '')}</code></p>
<p><span class="label">Member since</span> ${escapeMarkup(when(c.member_since))}</p>
<p>${stats.total} signature${stats.total === 1 ? '' : 's'}: ${stats.active} active, ${stats.revoked} revoked.${c.contactable ? ' Accepts contact requests.' : ''}</p>
</section>
<section class="card"><h2>Signatures</h2>
${rows ? `<ul class="sigs">\n${rows}\n</ul>` : '<p>No signatures yet.</p>'}
</section>`,
  );
}

/** A signed PDQ (issue 28), for hash-sharing readers: the hash and its quality, or a vPDQ's frame count. */
function pdqLine(pdq: CreatorAnswer['signatures'][number]['pdq_hash']): string {
  if (!pdq) return '';
  if (pdq.hash_type === 'PDQ') return `<p><span class="label">PDQ</span> <code class="wrap">${escapeMarkup(pdq.hash_value)}</code> &middot; quality ${escapeMarkup(String(pdq.quality))}</p>\n`;
  return `<p><span class="label">vPDQ</span> ${escapeMarkup(String(pdq.frames.length))} frame${pdq.frames.length === 1 ? '' : 's'}</p>\n`;
}

/** The profile fields the creator made public (decisions.md 5), for the page's heading. */
export function publicProfile(creator: Creator): { name: string | null; picture: string | null } {
  const u = creator.user;
  const grants = new Set(u?.publicFields ?? []);
  const name = (grants.has('display_name') ? u?.displayName : null) ?? (grants.has('username') ? u?.username : null) ?? null;
  return { name, picture: grants.has('profile_picture') ? (u?.profilePicture ?? null) : null };
}

// ---------------------------------------------------------------- content rights (decisions.md 9)

/** decisions.md 9: `{file_hash, signed, signer_count, rights, signers: [{signer, signed_at, ...rights}]}`, as JSON bytes (what the cache keeps). */
export function contentRightsAnswer(rights: FileRights): Buffer {
  const signers = rights.signatures.map((s) => ({ signer: s.record.signer, signed_at: s.record.signed_at, ...declaredRights(s) }));
  const body = {
    file_hash: rights.fileHash,
    signed: signers.length > 0,
    signer_count: new Set(signers.map((s) => s.signer)).size,
    rights: rights.combined,
    signers,
  };
  return Buffer.from(JSON.stringify(body), 'utf8');
}

// ---------------------------------------------------------------- badge (decisions.md 9)

function latestOf(list: readonly StoredSignature[]): StoredSignature | null {
  return list.reduce<StoredSignature | null>((a, s) => (a === null || s.record.signed_at >= a.record.signed_at ? s : a), null);
}

/** decisions.md 9: `{file_hash, signed, signer_count, latest}`; latest is the newest live signature's public fields or null. */
export function badgeJson(rights: FileRights) {
  const latest = latestOf(rights.signatures);
  const shown = latest === null ? null : publicSignature(latest, null);
  return {
    file_hash: rights.fileHash,
    signed: rights.signatures.length > 0,
    signer_count: new Set(rights.signatures.map((s) => s.record.signer)).size,
    latest:
      shown === null
        ? null
        : {
            signer: shown.signer,
            signer_did: shown.signer_did,
            signer_display_name: shown.signer_display_name,
            signed_at: shown.signed_at,
            intent: shown.intent,
            ai_generation: shown.ai_generation,
          },
  };
}

const THEMES = {
  light: { label: '#24292f', labelText: '#ffffff', signed: '#1a7f37', unsigned: '#6e7781', text: '#ffffff', plain: '#24292f', bg: '#ffffff' },
  dark: { label: '#d0d7de', labelText: '#0d1117', signed: '#3fb950', unsigned: '#8c959f', text: '#0d1117', plain: '#e6edf3', bg: '#0d1117' },
} as const;

/** The badge's words: the signer's public name when one signer granted it, else a count. */
export function badgeText(json: ReturnType<typeof badgeJson>): string {
  if (!json.signed) return 'Unsigned';
  const name = json.signer_count === 1 ? json.latest?.signer_display_name : null;
  if (name) return `Signed by ${name.length > 40 ? `${name.slice(0, 39)}…` : name}`;
  return `Signed by ${json.signer_count} signer${json.signer_count === 1 ? '' : 's'}`;
}

/** About 6.5 px per character of 11 px Verdana-like text: enough room, never exact. */
const textWidth = (text: string): number => Math.ceil([...text].length * 6.5) + 12;

/** decisions.md 9: an SVG badge (style badge: label and value; minimal: a mark and the words), light or dark. */
export function badgeSvg(json: ReturnType<typeof badgeJson>, options: Pick<BadgeOptions, 'style' | 'theme'>): string {
  const t = THEMES[options.theme];
  const text = badgeText(json);
  const colour = json.signed ? t.signed : t.unsigned;
  const title = escapeMarkup(`${text} (file ${json.file_hash})`);
  const value = escapeMarkup(text);
  if (options.style === 'minimal') {
    const w = textWidth(text) + 18;
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" viewBox="0 0 ${w} 20" role="img" aria-label="${value}">
<title>${title}</title>
<circle cx="9" cy="10" r="6" fill="${colour}"/>
<text x="20" y="14" fill="${t.plain}" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">${value}</text>
</svg>
`;
  }
  const labelText = 'Provenant';
  const lw = textWidth(labelText);
  const vw = textWidth(text);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${lw + vw}" height="20" viewBox="0 0 ${lw + vw} 20" role="img" aria-label="${escapeMarkup(labelText)}: ${value}">
<title>${title}</title>
<rect width="${lw}" height="20" rx="3" fill="${t.label}"/>
<rect x="${lw}" width="${vw}" height="20" rx="3" fill="${colour}"/>
<g font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">
<text x="6" y="14" fill="${t.labelText}">${escapeMarkup(labelText)}</text>
<text x="${lw + 6}" y="14" fill="${t.text}">${value}</text>
</g>
</svg>
`;
}

// ---------------------------------------------------------------- the contact relay (spec 4.13)

/** Spec 4.13: the one answer of POST /contact, whatever became of the request: the same bytes every time. */
export const CONTACT_ANSWER = Buffer.from(
  JSON.stringify({ success: true, message: 'Thank you. If the signer accepts contact requests, your message will be passed on.' }),
  'utf8',
);
