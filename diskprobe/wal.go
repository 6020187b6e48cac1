package diskprobe

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// The wal pattern writes as etcd 3.6's server/storage/wal does:
//   - segments of SegmentSizeBytes, preallocated with fallocate mode 0 (fileutil.Preallocate(f, size, true)),
//     the next one prepared in the background by a file pipeline (file_pipeline.go);
//   - records framed by an 8-byte length field and padded to 8 bytes (encoder.go, encodeFrameSize),
//     buffered by a PageWriter that flushes whole 4 KiB pages when its 128 KiB buffer fills (pkg/ioutil);
//   - per raft batch (WAL.Save): the entries and a HardState record, then one flush and one fdatasync;
//   - when the flushed offset reaches the segment size, a cut (WAL.cut): truncate, sync, take the
//     preallocated file, write crc, metadata and state records, sync, rename, fsync the directory.
const (
	walPageBytes   = 8 * 512    // encoder.go: walPageBytes = 8 * minSectorSize
	walBufferBytes = 128 * 1024 // pkg/ioutil/pagewriter.go: defaultBufferBytes
	frameHeader    = 8          // the length field before every record
	stateFrame     = 32         // a HardState record: header + 24 bytes of padded record
)

var crcTable = crc32.MakeTable(crc32.Castagnoli) // wal/wal.go: crcTable

// walBatchBytes is the bytes one batch writes: the block size rounded up to 8.
func walBatchBytes(blockSize int) int { return (blockSize + 7) &^ 7 }

// walName is etcd's segment name: sequence and first raft index, in hex.
func walName(seq, index uint64) string { return fmt.Sprintf("%016x-%016x.wal", seq, index) }

// walProbe writes cfg.Size bytes of batches of cfg.BlockSize through a WAL, one fdatasync each.
func walProbe(ctx context.Context, dir string, cfg Config, deadline time.Time, rec *recorder) error {
	w, err := createWAL(dir, cfg.SegmentBytes)
	if err != nil {
		return fmt.Errorf("wal pattern: %w", err)
	}
	defer w.close()
	b, err := newWALBatch(cfg.BlockSize)
	if err != nil {
		return err
	}
	w.pw.rec = rec
	batches := cfg.Size / int64(len(b.entry)+len(b.state))
	st := newStopper(ctx, deadline)
	rec.start = time.Now()
	defer func() { rec.end = time.Now() }()
	now := rec.start
	var tick *time.Ticker
	if cfg.Interval > 0 {
		tick = time.NewTicker(cfg.Interval)
		defer tick.Stop()
	}
	for i := int64(0); i < batches && !st.stop(now); i++ {
		if tick != nil && i > 0 {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		b.stamp(uint64(i))
		if err := w.encode(b.entry); err != nil {
			return fmt.Errorf("wal pattern: write: %w", err)
		}
		if err := w.encode(b.state); err != nil {
			return fmt.Errorf("wal pattern: write: %w", err)
		}
		// WAL.Save compares the file offset (flushed bytes only) with the segment size.
		if w.pw.off < cfg.SegmentBytes {
			err = w.sync()
		} else {
			err = w.cut(ctx, uint64(i)+1)
		}
		if err != nil {
			return fmt.Errorf("wal pattern: %w", err)
		}
		now = time.Now()
	}
	return ctx.Err()
}

// walBatch holds one batch's two frames, built once so the loop only stamps and checksums them.
type walBatch struct {
	entry, state []byte
	crc          uint32
}

func newWALBatch(blockSize int) (*walBatch, error) {
	total := walBatchBytes(blockSize)
	b := &walBatch{entry: make([]byte, total-stateFrame), state: make([]byte, stateFrame)}
	if _, err := rand.Read(b.entry[frameHeader:]); err != nil {
		return nil, err
	}
	// The data is already 8-byte aligned, so the length field carries no padding flag.
	binary.LittleEndian.PutUint64(b.entry, uint64(len(b.entry)-frameHeader))
	binary.LittleEndian.PutUint64(b.state, uint64(len(b.state)-frameHeader))
	return b, nil
}

// stamp makes the batch distinct (its raft index) and chains the records' CRCs as the
// encoder does, so the CPU cost per batch is etcd's too.
func (b *walBatch) stamp(index uint64) {
	binary.LittleEndian.PutUint64(b.entry[frameHeader:], index)
	binary.LittleEndian.PutUint64(b.state[frameHeader:], index)
	b.crc = crc32.Update(b.crc, crcTable, b.entry[frameHeader+8:])
	binary.LittleEndian.PutUint32(b.entry[frameHeader+8:], b.crc)
	b.crc = crc32.Update(b.crc, crcTable, b.state[frameHeader+8:])
	binary.LittleEndian.PutUint32(b.state[frameHeader+8:], b.crc)
}

// wal is the open tail segment, its page writer, the directory and the file pipeline.
type wal struct {
	dir    string
	dirF   *os.File
	f      *os.File
	pw     pageWriter
	fp     *filePipeline
	seq    uint64
	header []byte // crc, metadata and state frames a new segment starts with
}

// createWAL creates the first segment and does wal.Create's initial sync, untimed.
func createWAL(dir string, segBytes int64) (*wal, error) {
	dirF, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, walName(0, 0))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		dirF.Close()
		return nil, err
	}
	if err := fallocate(f, segBytes); err != nil {
		f.Close()
		dirF.Close()
		return nil, fmt.Errorf("preallocate %s: %w", path, err)
	}
	w := &wal{dir: dir, dirF: dirF, f: f, header: make([]byte, 3*stateFrame)}
	for i := 0; i < 3; i++ {
		binary.LittleEndian.PutUint64(w.header[i*stateFrame:], stateFrame-frameHeader)
	}
	w.pw = pageWriter{f: f, rec: newRecorder(), buf: make([]byte, walBufferBytes+walPageBytes)}
	w.fp = newFilePipeline(dir, segBytes)
	// wal.Create writes the first records, syncs and fsyncs the directory before etcd serves;
	// that is set-up, recorded on the throwaway recorder above.
	if err := w.pw.write(w.header); err != nil {
		w.close()
		return nil, err
	}
	if err := w.sync(); err != nil {
		w.close()
		return nil, err
	}
	if err := fsync(int(dirF.Fd())); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// encode writes one frame as encoder.write does: the length field, then the padded data.
func (w *wal) encode(frame []byte) error {
	if err := w.pw.write(frame[:frameHeader]); err != nil {
		return err
	}
	return w.pw.write(frame[frameHeader:])
}

// sync is WAL.sync: flush the page writer, then fdatasync, timed as walFsyncSec.
func (w *wal) sync() error {
	if err := w.pw.flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	t0, w0 := w.pw.rec.syncStart()
	if err := fdatasync(int(w.f.Fd())); err != nil {
		return fmt.Errorf("fdatasync: %w", err)
	}
	w.pw.rec.recordSync(t0, w0)
	return nil
}

// cut is WAL.cut. It allocates (names, files): it runs once per segment, not per batch.
func (w *wal) cut(ctx context.Context, index uint64) error {
	if err := w.f.Truncate(w.pw.off); err != nil {
		return fmt.Errorf("truncate: %w", err)
	}
	if err := w.sync(); err != nil {
		return err
	}
	newTail, err := w.fp.open(ctx)
	if err != nil {
		return fmt.Errorf("next segment: %w", err)
	}
	w.f.Close()
	w.f, w.pw.f, w.pw.off, w.pw.pageOffset = newTail, newTail, 0, 0
	if err := w.pw.write(w.header); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := w.sync(); err != nil {
		return err
	}
	w.seq++
	path := filepath.Join(w.dir, walName(w.seq, index))
	if err := os.Rename(newTail.Name(), path); err != nil {
		return err
	}
	t0, w0 := w.pw.rec.syncStart()
	if err := fsync(int(w.dirF.Fd())); err != nil {
		return fmt.Errorf("fsync %s: %w", w.dir, err)
	}
	w.pw.rec.recordSync(t0, w0) // etcd observes the directory fsync as a WAL fsync too
	// Reopen under the new name, as etcd does, and carry on at the same offset.
	newTail.Close()
	if w.f, err = os.OpenFile(path, os.O_WRONLY, 0); err != nil {
		return err
	}
	if _, err := w.f.Seek(w.pw.off, io.SeekStart); err != nil {
		return err
	}
	w.pw.f = w.f
	w.pw.pageOffset = int(w.pw.off % walPageBytes)
	w.pw.rec.cuts++
	return nil
}

func (w *wal) close() {
	w.fp.close()
	w.f.Close()
	w.dirF.Close()
}

// fsync retries on EINTR, like fdatasync.
func fsync(fd int) error {
	for {
		if err := unix.Fsync(fd); err != unix.EINTR {
			return err
		}
	}
}

// pageWriter is etcd's ioutil.PageWriter, timing each write(2) it makes. It buffers records
// and, when the buffer passes its watermark, completes the current page and writes whole pages,
// so a torn write can only hit the last page.
type pageWriter struct {
	f          *os.File
	rec        *recorder
	buf        []byte
	buffered   int
	pageOffset int   // offset within a page of the buffer's start
	off        int64 // file offset: bytes written to the file so far
}

func (pw *pageWriter) write(p []byte) error {
	if len(p)+pw.buffered <= walBufferBytes {
		copy(pw.buf[pw.buffered:], p)
		pw.buffered += len(p)
		return nil
	}
	// complete the slack page in the buffer if unaligned
	if slack := walPageBytes - (pw.pageOffset+pw.buffered)%walPageBytes; slack != walPageBytes {
		if slack > len(p) {
			copy(pw.buf[pw.buffered:], p) // not enough to complete the page: avoid an unaligned flush
			pw.buffered += len(p)
			return nil
		}
		copy(pw.buf[pw.buffered:], p[:slack])
		pw.buffered += slack
		p = p[slack:]
	}
	if err := pw.flush(); err != nil {
		return err
	}
	if len(p) > walPageBytes {
		whole := len(p) / walPageBytes * walPageBytes
		if err := pw.writeFile(p[:whole]); err != nil {
			return err
		}
		p = p[whole:]
	}
	return pw.write(p)
}

func (pw *pageWriter) flush() error {
	if pw.buffered == 0 {
		return nil
	}
	err := pw.writeFile(pw.buf[:pw.buffered])
	pw.pageOffset = (pw.pageOffset + pw.buffered) % walPageBytes
	pw.buffered = 0
	return err
}

func (pw *pageWriter) writeFile(p []byte) error {
	t0 := time.Now()
	n, err := pw.f.Write(p)
	pw.rec.recordWrite(time.Since(t0), n)
	pw.off += int64(n)
	return err
}

// filePipeline is etcd's: it keeps the next segment preallocated as N.tmp so a cut does not
// wait for fallocate.
type filePipeline struct {
	filec chan *os.File
	errc  chan error
	donec chan struct{}
}

func newFilePipeline(dir string, size int64) *filePipeline {
	fp := &filePipeline{filec: make(chan *os.File), errc: make(chan error, 1), donec: make(chan struct{})}
	go fp.run(dir, size)
	return fp
}

func (fp *filePipeline) run(dir string, size int64) {
	defer close(fp.errc)
	for count := 0; ; count++ {
		// count % 2 so this file isn't the same as the one last published
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%d.tmp", count%2)), os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			if err = fallocate(f, size); err != nil {
				f.Close()
			}
		}
		if err != nil {
			fp.errc <- err
			return
		}
		select {
		case fp.filec <- f:
		case <-fp.donec:
			os.Remove(f.Name())
			f.Close()
			return
		}
	}
}

func (fp *filePipeline) open(ctx context.Context) (*os.File, error) {
	select {
	case f := <-fp.filec:
		return f, nil
	case err := <-fp.errc:
		if err == nil {
			err = os.ErrClosed
		}
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// close stops the pipeline and waits for it, so no file appears after the probe folder is removed.
func (fp *filePipeline) close() {
	close(fp.donec)
	for range fp.errc {
	}
}
