// tlogref: Go's reference implementation (golang.org/x/mod/sumdb/note and sumdb/tlog)
// run against Provenant's transparency log, for test/lib/tlog-go.test.ts. Built with
// GOPATH=/usr/share/gocode GO111MODULE=off (Debian's golang-golang-x-mod-dev).
//
//	tlogref check DIR   opens DIR/checkpoint with note.Open and DIR/vkey (and the
//	                    cosignatures with DIR/witness-vkeys), checks DIR/proofs.json with
//	                    tlog.CheckRecord and tlog.CheckTree, recomputes the root through
//	                    tlog.TileHashReader over DIR/tile/... and from the level-0 tiles
//	                    alone, and prints Go's own proofs from those tiles as JSON.
//	tlogref make N      builds a log of N entries ("go entry <i>\n") with tlog, signs its
//	                    checkpoint with note, and prints the note, proofs and tiles as JSON.
//
// Go's Tile.Path writes the tile height into the path (tile/8/L/N); C2SP tlog-tiles
// omits it (tile/L/N): c2spPath maps one to the other.
package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const height = 8

func c2spPath(t tlog.Tile) string {
	return "tile/" + strings.TrimPrefix(t.Path(), fmt.Sprintf("tile/%d/", height))
}

// cosigVerifier verifies c2sp.org/tlog-cosignature cosignature/v1 (type 0x04) signatures,
// which Go's note package does not know.
type cosigVerifier struct {
	name string
	hash uint32
	key  ed25519.PublicKey
}

func (v cosigVerifier) Name() string    { return v.name }
func (v cosigVerifier) KeyHash() uint32 { return v.hash }
func (v cosigVerifier) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig[:8])
	if t > 1<<63-1 {
		return false
	}
	m := append([]byte(fmt.Sprintf("cosignature/v1\ntime %d\n", t)), msg...)
	return ed25519.Verify(v.key, m, sig[8:])
}

func newCosigVerifier(vkey string) (note.Verifier, error) {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		return nil, errors.New("malformed cosigner vkey")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) != 33 || raw[0] != 0x04 {
		return nil, errors.New("not a cosignature/v1 key")
	}
	h := sha256.Sum256(append([]byte(parts[0]+"\n"), raw...))
	id := binary.BigEndian.Uint32(h[:4])
	if fmt.Sprintf("%08x", id) != parts[1] {
		return nil, errors.New("cosigner key ID mismatch")
	}
	return cosigVerifier{parts[0], id, ed25519.PublicKey(raw[1:])}, nil
}

type dirTiles struct{ dir string }

func (d dirTiles) Height() int { return height }
func (d dirTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		data, err := os.ReadFile(filepath.Join(d.dir, c2spPath(t)))
		if err != nil {
			return nil, err
		}
		out[i] = data
	}
	return out, nil
}
func (d dirTiles) SaveTiles([]tlog.Tile, [][]byte) {}

type inclusion struct {
	Index    int64    `json:"index"`
	LeafHash string   `json:"leafHash"`
	Proof    []string `json:"proof"`
}
type consistency struct {
	Old     int64    `json:"old"`
	OldRoot string   `json:"oldRoot"`
	Proof   []string `json:"proof"`
}
type proofs struct {
	Inclusion   []inclusion   `json:"inclusion"`
	Consistency []consistency `json:"consistency"`
}

func hashOf(s string) tlog.Hash {
	h, err := tlog.ParseHash(s)
	must(err)
	return h
}

func b64s(hs []tlog.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	return out
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "tlogref:", err)
		os.Exit(1)
	}
}

// parseCheckpoint reads the C2SP checkpoint lines (Go's tlog.ParseTree wants the go.sum header instead).
func parseCheckpoint(text string) (origin string, tree tlog.Tree) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		must(errors.New("checkpoint has fewer than three lines"))
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	must(err)
	return lines[0], tlog.Tree{N: n, Hash: hashOf(lines[2])}
}

// memoryHashes is a tlog.HashReader over stored hashes kept in a slice (tlog's storage order).
type memoryHashes []tlog.Hash

func (m *memoryHashes) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		if x >= int64(len(*m)) {
			return nil, fmt.Errorf("no stored hash %d", x)
		}
		out[i] = (*m)[x]
	}
	return out, nil
}

func (m *memoryHashes) add(n int64, h tlog.Hash) {
	hs, err := tlog.StoredHashesForRecordHash(n, h, m)
	must(err)
	*m = append(*m, hs...)
}

func check(dir string) {
	vkey, err := os.ReadFile(filepath.Join(dir, "vkey"))
	must(err)
	v, err := note.NewVerifier(strings.TrimSpace(string(vkey)))
	must(err)
	verifiers := []note.Verifier{v}
	if w, err := os.ReadFile(filepath.Join(dir, "witness-vkeys")); err == nil {
		for _, line := range strings.Fields(string(w)) {
			cv, err := newCosigVerifier(line)
			must(err)
			verifiers = append(verifiers, cv)
		}
	}
	msg, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
	must(err)
	n, err := note.Open(msg, note.VerifierList(verifiers...))
	must(err)
	signers := []string{}
	for _, s := range n.Sigs {
		signers = append(signers, s.Name)
	}
	origin, tree := parseCheckpoint(n.Text)

	var ps proofs
	raw, err := os.ReadFile(filepath.Join(dir, "proofs.json"))
	must(err)
	must(json.Unmarshal(raw, &ps))
	for _, p := range ps.Inclusion {
		proof := make(tlog.RecordProof, len(p.Proof))
		for i, h := range p.Proof {
			proof[i] = hashOf(h)
		}
		if err := tlog.CheckRecord(proof, tree.N, tree.Hash, p.Index, hashOf(p.LeafHash)); err != nil {
			must(fmt.Errorf("inclusion of %d: %v", p.Index, err))
		}
	}
	for _, p := range ps.Consistency {
		proof := make(tlog.TreeProof, len(p.Proof))
		for i, h := range p.Proof {
			proof[i] = hashOf(h)
		}
		if err := tlog.CheckTree(proof, tree.N, tree.Hash, p.Old, hashOf(p.OldRoot)); err != nil {
			must(fmt.Errorf("consistency from %d: %v", p.Old, err))
		}
	}

	// the root through Go's TileHashReader (which also checks every tile it reads against the tree)
	r := tlog.TileHashReader(tree, dirTiles{dir})
	th, err := tlog.TreeHash(tree.N, r)
	must(err)
	if th != tree.Hash {
		must(errors.New("TreeHash over the tiles differs from the checkpoint root"))
	}

	// the root from the level-0 tiles alone, through tlog's stored-hash algorithm
	var stored memoryHashes
	tiles := dirTiles{dir}
	for start := int64(0); start < tree.N; start += 1 << height {
		t := tlog.TileForIndex(height, tlog.StoredHashIndex(0, start))
		t.W = int(min64(tree.N-start, 1<<height))
		data, err := tiles.ReadTiles([]tlog.Tile{t})
		must(err)
		for i := 0; i < t.W; i++ {
			var h tlog.Hash
			copy(h[:], data[0][i*32:(i+1)*32])
			stored.add(start+int64(i), h)
		}
	}
	root0, err := tlog.TreeHash(tree.N, &stored)
	must(err)
	if root0 != tree.Hash {
		must(errors.New("the root recomputed from the level-0 tiles differs from the checkpoint root"))
	}

	// Go's own proofs from the same tiles, for the caller to compare with its own
	goProofs := proofs{}
	for _, p := range ps.Inclusion {
		rp, err := tlog.ProveRecord(tree.N, p.Index, r)
		must(err)
		goProofs.Inclusion = append(goProofs.Inclusion, inclusion{Index: p.Index, LeafHash: p.LeafHash, Proof: b64s(rp)})
	}
	for _, p := range ps.Consistency {
		tp, err := tlog.ProveTree(tree.N, p.Old, r)
		must(err)
		goProofs.Consistency = append(goProofs.Consistency, consistency{Old: p.Old, OldRoot: p.OldRoot, Proof: b64s(tp)})
	}
	out, _ := json.Marshal(map[string]interface{}{
		"origin": origin, "size": tree.N, "root": tree.Hash.String(), "signers": signers,
		"unverified": len(n.UnverifiedSigs), "proofs": goProofs,
	})
	fmt.Println(string(out))
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

func make_(size int64) {
	var stored memoryHashes
	roots := map[int64]tlog.Hash{}
	for i := int64(0); i < size; i++ {
		stored.add(i, tlog.RecordHash([]byte(fmt.Sprintf("go entry %d\n", i))))
		root, err := tlog.TreeHash(i+1, &stored)
		must(err)
		roots[i+1] = root
	}
	skey, vkey, err := note.GenerateKey(rand.Reader, "go.example/log")
	must(err)
	signer, err := note.NewSigner(skey)
	must(err)
	text := fmt.Sprintf("go.example/log\n%d\n%s\n", size, roots[size].String())
	msg, err := note.Sign(&note.Note{Text: text}, signer)
	must(err)
	ps := proofs{}
	seen := map[int64]bool{}
	for _, idx := range []int64{0, 1, size / 2, size - 2, size - 1} {
		if idx < 0 || idx >= size || seen[idx] {
			continue
		}
		seen[idx] = true
		rp, err := tlog.ProveRecord(size, idx, &stored)
		must(err)
		leaf, err := stored.ReadHashes([]int64{tlog.StoredHashIndex(0, idx)})
		must(err)
		ps.Inclusion = append(ps.Inclusion, inclusion{Index: idx, LeafHash: leaf[0].String(), Proof: b64s(rp)})
	}
	seenOld := map[int64]bool{}
	for _, old := range []int64{1, 2, size / 3, size - 1, size} {
		if old < 1 || old > size || seenOld[old] {
			continue
		}
		seenOld[old] = true
		tp, err := tlog.ProveTree(size, old, &stored)
		must(err)
		ps.Consistency = append(ps.Consistency, consistency{Old: old, OldRoot: roots[old].String(), Proof: b64s(tp)})
	}
	tiles := map[string]string{}
	for _, t := range tlog.NewTiles(height, 0, size) {
		data, err := tlog.ReadTileData(t, &stored)
		must(err)
		tiles[c2spPath(t)] = base64.StdEncoding.EncodeToString(data)
	}
	out, _ := json.Marshal(map[string]interface{}{
		"vkey": vkey, "note": string(msg), "size": size, "root": roots[size].String(), "proofs": ps, "tiles": tiles,
	})
	fmt.Println(string(out))
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: tlogref check DIR | tlogref make N")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "check":
		check(os.Args[2])
	case "make":
		n, err := strconv.ParseInt(os.Args[2], 10, 64)
		must(err)
		make_(n)
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", os.Args[1])
		os.Exit(2)
	}
}
