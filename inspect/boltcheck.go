package inspect

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// bbolt trusts the page ids and offsets it reads: a damaged or crafted file makes
// it follow pointers outside its memory map (into the Go heap, which the runtime
// cannot survive) or around a cycle of pages (unbounded recursion). checkBolt walks
// the file's b+tree first, with bounds checks and a visited set, so bbolt only ever
// reads a file whose structure is sound. The layout is bbolt's on-disk format
// (go.etcd.io/bbolt/internal/common: page.go, meta.go, bucket.go).
const (
	pageHeaderSize   = 16 // id u64, flags u16, count u16, overflow u32
	elementSize      = 16 // branch: pos, ksize u32, pgid u64; leaf: flags, pos, ksize, vsize u32
	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	freelistPageFlag = 0x10
	bucketLeafFlag   = 0x01
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	noFreelist       = ^uint64(0)
	// A meta: magic, version, pageSize, flags (u32 each), root bucket (root, sequence
	// u64), freelist, pgid, txid, checksum (u64 each); the checksum covers the rest.
	metaChecksumOff = 56
	metaSize        = 64
)

var errNotBolt = errors.New("not a bbolt database (no valid meta page)")

type boltMeta struct {
	pageSize                  int64
	root, freelist, hwm, txid uint64
}

// checkBolt validates the structure of the bbolt file at path whose first
// dataSize bytes are the database.
func checkBolt(path string, dataSize int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := readMeta(f, dataSize)
	if err != nil {
		return err
	}
	if m.hwm > uint64(dataSize/m.pageSize) {
		return fmt.Errorf("truncated: the database spans %d pages of %d bytes but the file holds %d bytes", m.hwm, m.pageSize, dataSize)
	}
	w := &boltWalk{f: f, m: m, seen: map[uint64]bool{0: true, 1: true}}
	if m.freelist != noFreelist {
		p, err := w.page(m.freelist)
		if err != nil {
			return fmt.Errorf("freelist: %w", err)
		}
		if flags, count := binary.LittleEndian.Uint16(p[8:]), uint64(binary.LittleEndian.Uint16(p[10:])); flags&freelistPageFlag == 0 {
			return fmt.Errorf("freelist page %d has flags %#x", m.freelist, flags)
		} else if count == 0xFFFF { // the real count is the first element
			if len(p) < pageHeaderSize+8 || binary.LittleEndian.Uint64(p[pageHeaderSize:]) > uint64(len(p)-pageHeaderSize)/8 {
				return fmt.Errorf("freelist page %d: count past the page", m.freelist)
			}
		}
	}
	return w.tree(m.root)
}

// readMeta returns the valid meta with the highest transaction id, as bbolt does.
func readMeta(f *os.File, size int64) (boltMeta, error) {
	var best boltMeta
	found := false
	for i := int64(0); i < 2; i++ {
		// Meta 0 is at offset 0; meta 1 one page later, the page size read from meta 0
		// (or bbolt's default 4096 when meta 0 is unreadable, as bbolt does).
		off := i * 4096
		if i == 1 && found {
			off = best.pageSize
		}
		buf := make([]byte, pageHeaderSize+metaSize)
		if off+int64(len(buf)) > size {
			continue
		}
		if _, err := f.ReadAt(buf, off); err != nil {
			return best, err
		}
		b := buf[pageHeaderSize:]
		h := fnv.New64a()
		h.Write(b[:metaChecksumOff])
		le := binary.LittleEndian
		m := boltMeta{pageSize: int64(le.Uint32(b[8:])), root: le.Uint64(b[16:]), freelist: le.Uint64(b[32:]), hwm: le.Uint64(b[40:]), txid: le.Uint64(b[48:])}
		if le.Uint32(b) != boltMagic || le.Uint32(b[4:]) != boltVersion || h.Sum64() != le.Uint64(b[metaChecksumOff:]) ||
			m.pageSize < 512 || m.pageSize > 1<<20 || m.pageSize&(m.pageSize-1) != 0 || m.hwm < 2 {
			continue
		}
		if !found || m.txid > best.txid {
			best, found = m, true
		}
	}
	if !found {
		return best, errNotBolt
	}
	return best, nil
}

type boltWalk struct {
	f    io.ReaderAt
	m    boltMeta
	seen map[uint64]bool
}

// page reads page id with its overflow pages, checking it lies below the high water mark.
func (w *boltWalk) page(id uint64) ([]byte, error) {
	if id < 2 || id >= w.m.hwm {
		return nil, fmt.Errorf("page %d out of range [2, %d)", id, w.m.hwm)
	}
	hdr := make([]byte, pageHeaderSize)
	if _, err := w.f.ReadAt(hdr, int64(id)*w.m.pageSize); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	if got := binary.LittleEndian.Uint64(hdr); got != id {
		return nil, fmt.Errorf("page %d claims id %d", id, got)
	}
	overflow := uint64(binary.LittleEndian.Uint32(hdr[12:]))
	if id+overflow >= w.m.hwm {
		return nil, fmt.Errorf("page %d: overflow %d past the end", id, overflow)
	}
	p := make([]byte, int64(1+overflow)*w.m.pageSize)
	if _, err := w.f.ReadAt(p, int64(id)*w.m.pageSize); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	return p, nil
}

// tree walks a bucket's b+tree from root, iteratively, visiting each page once.
func (w *boltWalk) tree(root uint64) error {
	stack := []uint64{root}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if w.seen[id] {
			return fmt.Errorf("page %d is referenced twice", id)
		}
		w.seen[id] = true
		p, err := w.page(id)
		if err != nil {
			return err
		}
		children, err := elements(p, id, false)
		if err != nil {
			return err
		}
		stack = append(stack, children...)
	}
	return nil
}

// elements checks the elements of page p (or of an inline bucket's page) and
// returns the pages they point to: branch children and sub-bucket roots.
func elements(p []byte, id uint64, inline bool) ([]uint64, error) {
	if len(p) < pageHeaderSize {
		return nil, fmt.Errorf("page %d: shorter than its header", id)
	}
	le := binary.LittleEndian
	flags, count := le.Uint16(p[8:]), int(le.Uint16(p[10:]))
	isBranch := flags&branchPageFlag != 0
	if (!isBranch && flags&leafPageFlag == 0) || (inline && isBranch) {
		return nil, fmt.Errorf("page %d: not a branch or leaf page (flags %#x)", id, flags)
	}
	if pageHeaderSize+count*elementSize > len(p) {
		return nil, fmt.Errorf("page %d: %d elements overflow the page", id, count)
	}
	var next []uint64
	for i := 0; i < count; i++ {
		at := pageHeaderSize + i*elementSize
		e := p[at : at+elementSize]
		if isBranch {
			pos, ksize := uint64(le.Uint32(e)), uint64(le.Uint32(e[4:]))
			if uint64(at)+pos+ksize > uint64(len(p)) {
				return nil, fmt.Errorf("page %d: element %d past the page", id, i)
			}
			next = append(next, le.Uint64(e[8:]))
			continue
		}
		eflags, pos, ksize, vsize := le.Uint32(e), uint64(le.Uint32(e[4:])), uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
		end := uint64(at) + pos + ksize + vsize
		if end > uint64(len(p)) {
			return nil, fmt.Errorf("page %d: element %d past the page", id, i)
		}
		if eflags&bucketLeafFlag == 0 {
			continue
		}
		v := p[uint64(at)+pos+ksize : end]
		if inline || len(v) < 16 {
			return nil, fmt.Errorf("page %d: element %d: bad bucket", id, i)
		}
		if root := le.Uint64(v); root != 0 {
			next = append(next, root)
		} else if _, err := elements(v[16:], id, true); err != nil {
			return nil, err
		}
	}
	return next, nil
}
