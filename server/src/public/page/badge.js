// The Provenant badge widget: <script src="https://PROVENANT/badge.js" async></script>
// turns every element with data-hash="<sha256>" (optional data-style="badge|minimal",
// data-theme="light|dark") into the file's badge, linked to its verification page.
// The badge is an <img> of the server's SVG, so nothing from the server is run or parsed
// as HTML on the embedding page.
(function () {
  var script = document.currentScript;
  var origin = new URL(script ? script.src : '/', location.href).origin;
  var api = origin + '/api/v1/sign-it/badge';
  var pick = function (value, allowed, fallback) { return allowed.indexOf(value) >= 0 ? value : fallback; };

  function render(el) {
    var hash = (el.getAttribute('data-hash') || '').trim().toLowerCase();
    if (el.getAttribute('data-provenant') === 'done' || !/^[0-9a-f]{64}$/.test(hash)) return;
    el.setAttribute('data-provenant', 'done');
    var query = 'hash=' + hash +
      '&style=' + pick(el.getAttribute('data-style'), ['badge', 'minimal'], 'badge') +
      '&theme=' + pick(el.getAttribute('data-theme'), ['light', 'dark'], 'light');
    var link = document.createElement('a');
    link.href = origin + '/?hash=' + hash;
    link.rel = 'noopener';
    var img = document.createElement('img');
    img.src = api + '?' + query;
    img.alt = 'Provenant: signature status of this file';
    img.height = 20;
    link.appendChild(img);
    el.replaceChildren(link);
    // the words for screen readers: the same ones the SVG shows
    fetch(api + '?' + query + '&format=json').then(function (r) { return r.ok ? r.json() : null; }).then(function (b) {
      if (!b) return;
      img.alt = 'Provenant: ' + (b.signed ? 'signed by ' + b.signer_count + ' signer' + (b.signer_count === 1 ? '' : 's') : 'unsigned');
    }).catch(function () {});
  }

  function renderAll() {
    var list = document.querySelectorAll('[data-hash]');
    for (var i = 0; i < list.length; i++) render(list[i]);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', renderAll);
  else renderAll();
})();
