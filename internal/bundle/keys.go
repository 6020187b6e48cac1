package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// --keys values: no key names (the default), names hashed, names in clear.
const (
	KeysNone   = ""
	KeysHashed = "hashed"
	KeysPlain  = "plain"
)

// KeysModes are the values --keys takes.
var KeysModes = []string{KeysHashed, KeysPlain}

// keyDepth is how many '/'-separated segments name a prefix (inspect's default --depth).
const keyDepth = 2

// keysPage is the keys per range request: keys only, so a page is small.
const keysPage = 1000

// Keys is the key space grouped by prefix: names only, never values.
type Keys struct {
	Mode string `json:"mode"` // hashed | plain
	Read int    `json:"read"`
	// Truncated says the key space holds more keys than --max-keys.
	Truncated bool     `json:"truncated,omitempty"`
	Error     string   `json:"error,omitempty"`
	Prefixes  []Prefix `json:"prefixes"`
}

// Prefix is the keys under one prefix.
type Prefix struct {
	Prefix   string `json:"prefix"`
	Keys     int    `json:"keys"`
	KeyBytes int64  `json:"key_bytes"`
}

// readKeys lists at most o.MaxKeys key names (keys only, serializable pages)
// and groups them by prefix, each segment hashed unless o.Keys is KeysPlain.
func readKeys(ctx context.Context, cli *clientv3.Client, o Options) *Keys {
	k := &Keys{Mode: o.Keys}
	byPrefix := map[string]*Prefix{}
	from := "\x00"
	for k.Read < o.MaxKeys {
		cctx, cancel := context.WithTimeout(ctx, o.Timeout)
		resp, err := cli.Get(cctx, from, clientv3.WithFromKey(), clientv3.WithKeysOnly(), clientv3.WithSerializable(),
			clientv3.WithLimit(int64(min(keysPage, o.MaxKeys-k.Read))))
		cancel()
		if err != nil {
			k.Error = err.Error()
			break
		}
		for _, kv := range resp.Kvs {
			name := prefixOf(string(kv.Key), o.Keys == KeysHashed)
			p := byPrefix[name]
			if p == nil {
				p = &Prefix{Prefix: name}
				byPrefix[name] = p
			}
			p.Keys++
			p.KeyBytes += int64(len(kv.Key))
			k.Read++
		}
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		k.Truncated = k.Read >= o.MaxKeys
	}
	for _, p := range byPrefix {
		k.Prefixes = append(k.Prefixes, *p)
	}
	sort.Slice(k.Prefixes, func(i, j int) bool {
		a, b := k.Prefixes[i], k.Prefixes[j]
		return a.Keys > b.Keys || a.Keys == b.Keys && a.Prefix < b.Prefix
	})
	return k
}

// prefixOf is the prefix key is grouped under: its first keyDepth
// '/'-separated segments, never its last one (the key's own name), each hashed
// when hash is set ("/registry/pods/ns/p" → "/registry/pods/", hashed
// "/872491a3/049c287e/"), so the shape of the key space shows and no key's
// name does. A key of one segment is under "" (the top level).
func prefixOf(key string, hash bool) string {
	lead := strings.HasPrefix(key, "/")
	segs := strings.Split(strings.TrimPrefix(key, "/"), "/")
	segs = segs[:min(keyDepth, len(segs)-1)]
	if len(segs) == 0 {
		return ""
	}
	if hash {
		for i, s := range segs {
			segs[i] = hashName(s)
		}
	}
	out := strings.Join(segs, "/") + "/"
	if lead {
		out = "/" + out
	}
	return out
}

// hashName is the first 8 hex digits of a name's SHA-256: enough to tell the
// prefixes of one cluster apart, and the same in every bundle (so two bundles
// compare). A short well-known name (registry, pods) is recognisable by
// hashing it; names that are secrets themselves need KeysNone.
func hashName(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}
