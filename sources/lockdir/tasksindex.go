package lockdir

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// The tasks index is .claimdeck.tasks-index in the lock directory: every
// entry of the tasks file, parsed, in buckets by id, and the signature of
// the tasks file it was made from. A call on one task (claim --task,
// heartbeat, complete, get) reads its task's entry from it with an open
// and three reads, whatever the size of the queue, instead of parsing the
// whole tasks file.
//
// It is only ever a copy. It vouches for the tasks file only while the
// file's device, inode, size, mode, mtime and ctime are all the ones it
// names; anything else (an edit, a rename over it, a chmod, a touch) sends
// the call back to a full parse. ctime is the guard against an in-place
// rewrite of the same size within one tick of the clock, which keeps size
// and mtime: no program can set ctime back, so a write after the index was
// made changes it, provided that write comes on a later tick than the
// file's last change before. That is why an index is made only from a
// tasks file that had not changed for settleMargin before the temp file
// the index is written to was made (its ctime, on the file system's own
// clock, and this host's clock both): every later write lands on a later
// tick. A file changed more recently is parsed whole until it settles.
//
// Only a call holding the directory's write lock makes one (claim,
// heartbeat, complete and the other writes), by temp file and rename, so
// readers never write and never see half an index. A reader takes an
// index that is damaged (its header or a bucket fails its CRC, or does not
// decode), is for another tasks file, or is missing, as stale: it parses
// the tasks file whole, as before. The index takes the tasks file's
// permission bits as far as the directory's allow, so it shows no one a
// title they could not read in the tasks file.

// indexName is the tasks index's name in the lock directory: hidden, so
// the seed's globs never see it, and not a name a task's file can have.
const indexName = ".claimdeck.tasks-index"

// indexMagic starts every index; a new layout gets a new one.
const indexMagic = "CDTIDX01"

// settleMargin is how long a tasks file must have been left alone before a
// parse of it is trusted on its signature alone, in this process (the
// cache) or by others (the index): longer than the coarsest timestamp of
// a file system a lock directory lives on (2 s: FAT).
var settleMargin = 2 * time.Second

// maxIndexHeader bounds a header: the signature and the tasks file's path.
const maxIndexHeader = 64 + 4096

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// tasksSig is the tasks file's signature: what sigOf sees, and ctime and
// the device, which an in-place rewrite or a file on another mount change.
type tasksSig struct {
	fileSig
	dev   uint64
	ctime int64
}

func tasksSigOf(fi os.FileInfo) tasksSig {
	sig := tasksSig{fileSig: sigOf(fi)}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		sig.dev = uint64(st.Dev)
		sig.ctime = ctimeOf(st)
	}
	return sig
}

// settledBefore reports whether the file had last changed more than
// settleMargin before ref.
func (g tasksSig) settledBefore(ref time.Time) bool {
	limit := ref.Add(-settleMargin).UnixNano()
	return g.mtime < limit && g.ctime < limit
}

// bucketOf is the bucket of id among n.
func bucketOf(id string, n uint32) uint32 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return uint32(h.Sum64() % uint64(n))
}

// encodeIndex is the index of entries (the first of each id, as byID
// holds them) for the tasks file at path with signature sig.
func encodeIndex(path string, sig tasksSig, byID map[string]*taskEntry) []byte {
	n := uint32(max(1, len(byID)/2))
	blocks := make([][]byte, n)
	for id, e := range byID {
		b := bucketOf(id, n)
		blocks[b] = appendEntryRecord(blocks[b], e)
	}
	body := binary.LittleEndian.AppendUint64(nil, sig.dev)
	body = binary.LittleEndian.AppendUint64(body, sig.ino)
	body = binary.LittleEndian.AppendUint64(body, uint64(sig.size))
	body = binary.LittleEndian.AppendUint64(body, uint64(sig.mtime))
	body = binary.LittleEndian.AppendUint64(body, uint64(sig.ctime))
	body = binary.LittleEndian.AppendUint32(body, uint32(sig.mode))
	body = binary.LittleEndian.AppendUint32(body, n)
	body = binary.LittleEndian.AppendUint32(body, uint32(len(path)))
	body = append(body, path...)
	out := append([]byte(indexMagic), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...)
	out = append(out, body...)
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, crcTable))
	off := uint64(len(out)) + 16*uint64(n)
	for _, blk := range blocks {
		out = binary.LittleEndian.AppendUint64(out, off)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(blk)))
		out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(blk, crcTable))
		off += uint64(len(blk))
	}
	for _, blk := range blocks {
		out = append(out, blk...)
	}
	return out
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendEntryRecord adds one entry: its id, the fields a task takes from
// it, and its problem. The version is computed again when it is read.
func appendEntryRecord(b []byte, e *taskEntry) []byte {
	b = appendString(b, e.ID)
	b = appendString(b, e.Title)
	b = appendString(b, e.Description)
	b = binary.AppendVarint(b, int64(e.Priority))
	b = binary.AppendUvarint(b, uint64(e.Class))
	if e.CreatedAt.IsZero() {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = binary.AppendVarint(b, e.CreatedAt.Unix())
		b = binary.AppendUvarint(b, uint64(e.CreatedAt.Nanosecond()))
	}
	return appendString(b, e.Problem)
}

// errBadIndex is an index that does not decode: stale, never trusted.
var errBadIndex = errors.New("tasks index does not decode")

// recordReader decodes entry records, failing on the first bad byte.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) uvarint() uint64 { return decodeNext(r, binary.Uvarint) }
func (r *recordReader) varint() int64   { return decodeNext(r, binary.Varint) }

// decodeNext decodes the next number with decode.
func decodeNext[T uint64 | int64](r *recordReader, decode func([]byte) (T, int)) T {
	if r.err != nil {
		return 0
	}
	v, n := decode(r.b)
	if n <= 0 {
		r.err = errBadIndex
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) bytes(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errBadIndex
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *recordReader) string() string { return string(r.bytes(r.uvarint())) }

// entry decodes the next record.
func (r *recordReader) entry() (taskEntry, error) {
	var e taskEntry
	e.ID = r.string()
	e.Title = r.string()
	e.Description = r.string()
	p := r.varint()
	c := r.uvarint()
	if int64(int(p)) != p || c > math.MaxUint8 {
		r.err = errBadIndex
	}
	e.Priority, e.Class = int(p), model.Class(c)
	if has := r.bytes(1); r.err == nil && has[0] == 1 {
		sec, nsec := r.varint(), r.uvarint()
		if nsec >= 1e9 {
			r.err = errBadIndex
		}
		e.CreatedAt = time.Unix(sec, int64(nsec)).UTC()
	} else if r.err == nil && has[0] != 0 {
		r.err = errBadIndex
	}
	e.Problem = r.string()
	if r.err != nil {
		return taskEntry{}, r.err
	}
	e.setVersion()
	return e, nil
}

// indexHeader is what an index says it was made from.
type indexHeader struct {
	sig      tasksSig
	buckets  uint32
	path     string
	tableOff int64
}

// decodeHeader reads a header from the start of an index (head holds at
// least its first bytes; more are read from ra when the path is long).
func decodeHeader(ra io.ReaderAt, head []byte) (indexHeader, error) {
	var h indexHeader
	if len(head) < len(indexMagic)+4 || string(head[:len(indexMagic)]) != indexMagic {
		return h, errBadIndex
	}
	bodyLen := int64(binary.LittleEndian.Uint32(head[len(indexMagic):]))
	if bodyLen < 52 || bodyLen > maxIndexHeader {
		return h, errBadIndex
	}
	total := int64(len(indexMagic)) + 4 + bodyLen + 4
	if int64(len(head)) < total {
		buf := make([]byte, total)
		if n, err := ra.ReadAt(buf, 0); int64(n) < total {
			if err == nil {
				err = errBadIndex
			}
			return h, err
		}
		head = buf
	}
	head = head[:total]
	if crc32.Checksum(head[:total-4], crcTable) != binary.LittleEndian.Uint32(head[total-4:]) {
		return h, errBadIndex
	}
	body := head[len(indexMagic)+4 : total-4]
	le := binary.LittleEndian
	h.sig.dev, h.sig.ino = le.Uint64(body[0:]), le.Uint64(body[8:])
	h.sig.size, h.sig.mtime, h.sig.ctime = int64(le.Uint64(body[16:])), int64(le.Uint64(body[24:])), int64(le.Uint64(body[32:]))
	h.sig.mode = os.FileMode(le.Uint32(body[40:]))
	h.buckets = le.Uint32(body[44:])
	if len(body) < 52 || h.buckets == 0 || int64(le.Uint32(body[48:])) != int64(len(body))-52 {
		return h, errBadIndex
	}
	h.path = string(body[52:])
	h.tableOff = total
	return h, nil
}

// indexLookup finds id in the index at indexPath if the index was made
// from the tasks file at tasksPath as it is now (sig). ok false means the
// index cannot say (missing, stale, another file's, damaged): parse the
// tasks file. With ok, e nil means the tasks file has no entry for id.
// An empty id checks the header alone.
func indexLookup(indexPath, tasksPath string, sig tasksSig, id string) (e *taskEntry, ok bool) {
	onDisk("open", indexPath)
	f, err := os.OpenFile(indexPath, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	return lookupIn(f, fi.Size(), tasksPath, sig, id)
}

// lookupIn is indexLookup on an index of size bytes.
func lookupIn(f io.ReaderAt, size int64, tasksPath string, sig tasksSig, id string) (e *taskEntry, ok bool) {
	head := make([]byte, 512)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return nil, false
	}
	h, err := decodeHeader(f, head[:n])
	if err != nil || h.sig != sig || h.path != tasksPath {
		return nil, false
	}
	if id == "" {
		return nil, true
	}
	b := bucketOf(id, h.buckets)
	slot := make([]byte, 16)
	if _, err := f.ReadAt(slot, h.tableOff+16*int64(b)); err != nil {
		return nil, false
	}
	off, blkLen, sum := binary.LittleEndian.Uint64(slot), binary.LittleEndian.Uint32(slot[8:]), binary.LittleEndian.Uint32(slot[12:])
	if off > uint64(size) || uint64(blkLen) > uint64(size)-off {
		return nil, false
	}
	blk := make([]byte, blkLen)
	if _, err := f.ReadAt(blk, int64(off)); err != nil && !(err == io.EOF && blkLen == 0) {
		return nil, false
	}
	if crc32.Checksum(blk, crcTable) != sum {
		return nil, false
	}
	return findRecord(blk, id)
}

// findRecord is the entry of id in a bucket's records.
func findRecord(blk []byte, id string) (*taskEntry, bool) {
	r := &recordReader{b: blk}
	for len(r.b) > 0 {
		e, err := r.entry()
		if err != nil {
			return nil, false
		}
		if e.ID == id {
			return &e, true
		}
	}
	return nil, true
}

// indexTemp is an index being written: its temp file is made before the
// tasks file is read, so that its ctime says when, on the file system's
// clock, the read began.
type indexTemp struct {
	f   *os.File
	ref time.Time // the earlier of the temp file's ctime and this host's clock
}

// startIndex makes the temp file of a new index in dir; nil when the
// directory cannot take one (an index is an optimisation, never needed).
func startIndex(dir string) *indexTemp {
	now := time.Now()
	f, err := os.OpenFile(filepath.Join(dir, tempPrefix+randomHex(8)), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	ref := now
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if c := time.Unix(0, ctimeOf(st)); c.Before(ref) {
			ref = c
		}
	}
	return &indexTemp{f: f, ref: ref}
}

// commit writes the index and renames it into place with mode.
func (t *indexTemp) commit(dst string, data []byte, mode os.FileMode) {
	_, err := t.f.Write(data)
	if err == nil {
		err = t.f.Chmod(mode)
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(t.f.Name(), dst)
	}
	if err != nil {
		os.Remove(t.f.Name())
	}
}

func (t *indexTemp) abort() {
	t.f.Close()
	os.Remove(t.f.Name())
}
