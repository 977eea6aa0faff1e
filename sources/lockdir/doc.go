// Package lockdir is the seed 004 backend: a directory of JSON lock files
// that agents claim with shell snippets, shown and steered by claimdeck as
// if it were a database. It depends on the model and the Source interface;
// nothing outside it knows the file layout.
//
// # Files
//
//	{id}.lock     a claim (seed 004). Held by HUMAN when holder_kind is
//	              "HUMAN" or agent starts with "HUMAN:".
//	{id}.done     status "completed" (or none) = done; claimdeck adds
//	              "review" and "canceled". Seed agents skip a task with a
//	              .done, which is what review and canceled want.
//	{id}.failed   status "failed" (or none) = failed; claimdeck adds
//	              "blocked" and "backlog" (ntask's Backlog: created parked).
//	              Seed agents may retry it, as they do a failure.
//	{id}.queued   claimdeck's: a task back in the queue after a release or
//	              hand-off, with its reservation and history. The seed's
//	              globs (*.lock, *.done, *.failed) never see it.
//	archive/{id}.done, archive/{id}.failed
//	              the seed's cleanup; read as done/failed, so an archived
//	              task never returns to the queue.
//	archive/{id}@{time}-{rand}.{why}
//	              a file a claimdeck action displaced (released, taken-over,
//	              canceled, handed-off, expired, superseded, displaced), kept
//	              with who, when and why. Never read back as state.
//	.cd-held-{id}.{lock,done,failed,queued}
//	              a task's file moved aside in the middle of a change. It
//	              still counts as that file until the change publishes its
//	              successor, which names it in "replaces"; the next change
//	              of the task settles one a dead writer left.
//	.cd-tmp-*     temp files; the scan removes those older than a lease.
//	.claimdeck.flock the write lock, opened without following links,
//	              0600 (0640 at most: anyone who can open it can hold it).
//	.claimdeck.tasks-index
//	              the tasks index: the tasks file's entries, parsed, in
//	              buckets by id, with the signature of the tasks file they
//	              came from (see What a call costs). Only ever a copy:
//	              deleting it costs the next calls a parse.
//
// When several files exist the first of lock, done, failed, queued,
// archived done, archived failed decides the state; the tasks file only
// adds the tasks nobody has touched yet (Queued) and the title, priority
// and class the seed's files lack. Extra JSON fields are claimdeck's
// (title, task_type, priority, class, lock_token, holder_kind, run_id, node,
// escalation, artifacts, unblock_action, next_check_at, reservation, history,
// replaces) or
// anybody's, and are kept when claimdeck rewrites a file; the seed's
// fields keep their meaning, and every file keeps task_id, agent and
// claimed_at or completed_at, which the seed's status listing reads.
//
// Every file claimdeck writes takes the directory's permission bits less
// execute (0700 → 0600, 0770 → 0660), whatever the umask; a directory
// claimdeck makes is 0700, so a live token is never readable by others
// until the team opens the directory up.
//
// The tasks file is TasksFile (JSON or YAML list), else tasks.json in the
// directory, read with sources.ReadShared: a link, a FIFO, a device or a
// file over 64 MiB is refused naming it, and a parse error gives the line,
// never the bytes. Create splices one entry into it (before a JSON list's closing
// bracket, or as a YAML item at the end, comments kept) and replaces it by
// rename.
//
// # Reading
//
// A poll looks again only at what changed. The scan first reads, without
// waiting, an inotify queue on the directory and on archive/: the kernel
// queues an event, with the file's name, inside the system call that
// writes, truncates, renames, links, removes, chmods or touches it, so
// every change finished before the queue is read is in it. A directory
// with nothing queued is not listed and its files are not lstat'ed; a
// named file is lstat'ed and read again, whatever its size and mtime say
// (a rewrite within one tick of the clock keeps both). Where the kernel
// cannot vouch for every writer (NFS, SMB, FUSE, overlayfs, no inotify
// instance left, an overflowed queue, a file with a second link) the scan
// lists and lstats the directory, and reads what moved, as before.
//
// archive/ is read lazily. A task whose only file is an archived one, with
// an mtime before the horizon the poll asked for (the dashboard's window),
// is history: known by its name and lstat, counted in Delta.Archived, not
// opened. Its file is read once the window reaches it, when a live or held
// file of the task appears (the archive may decide the task then), when
// it changes (a changed file is inside the window), or when Archive asks
// for it; a poll with no horizon reads it all.
//
// Every poll with a horizon after the first also reads up to 256 history
// files no poll has read yet, newest first, to find the live work the
// seed's cleanup archives with the rest (a review or blocked marker, a
// file nobody can read). A final one stays counted history and is not
// read again until inotify or its lstat says it changed; the others are
// tasks again, returned by the next poll, full or incremental. An archive
// of N unread files is read through in ceil(N/256) polls: 100,000 in 391,
// at most about 13 minutes at the dashboard's 2 s poll interval, sooner
// when changes bring polls (a batch costs a poll 1-3 ms, BENCHMARKS.md).
// Until then Delta.Archived counts the unread as history, a parked one
// among them. With none left unread a poll reads nothing.
//
// # What a call costs
//
// An agent's call is a process: a source opened cold, no view kept. With
// N files in the directory, T tasks in the tasks file and L lock and
// queued files among the N (BenchmarkAgentCallsLockDir counts them):
//
//   - claim --task, heartbeat, complete, get: no listing; the task's own
//     names only: 6 lstats (claim --task), 10 (heartbeat, get), 17
//     (complete), and an open of each file the task has (0–3); an lstat of
//     the tasks file, and two opens of the tasks index (Open reads its
//     header, the call its header, the id's bucket slot and the bucket: a
//     few entries); then the write's temp file, link or rename, under the
//     flock. No inotify queue is made (the first scan makes one). None of
//     it grows with N or T.
//   - next, claim (claim-next), list --status READY --limit N: one listing
//     of the directory and one of archive/, an lstat of each of the N
//     names (and of each archived one), an open of each of the L lock and
//     queued files. A done or failed file is not opened: it decides a task
//     no content makes claimable or queued (view.finished), so a
//     directory of finished work costs these calls a name and an lstat
//     each, not a read. They also read and parse the whole tasks file:
//     they need every entry. claim-next then claims as claim --task does.
//
// The tasks index (.claimdeck.tasks-index) vouches for the tasks file only
// while the file's device, inode, size, mode, mtime and ctime are the ones
// it names. ctime is what an in-place rewrite keeping size and mtime still
// changes (no program can set it back), on a later clock tick than the
// file's last change; so an index is made only from a file that had not
// changed for 2 s before the read began, on this host's clock and on the
// file system's (the ctime of the index's temp file, made before the
// read). Only a process holding the write lock writes it, by temp file and
// rename, taking the tasks file's permission bits as far as the
// directory's allow. An index that is missing, stale, for another tasks
// file, a link or damaged (a CRC over its header and over each bucket) is
// not used: the call reads and parses the tasks file whole, as every call
// did before, and the next write makes a new one. A process's own parse
// follows the same rule: a tasks file changed less than 2 s before it was
// read is read again at the next look (and parsed again only if its bytes
// changed). So after a create (which rewrites the tasks file) calls on
// one task parse it until a write, 2 s or more later, finds it settled and
// indexes it. On a network share the times are the server's; a tasks file
// on another file system than the lock directory is judged by this host's
// clock and the lock directory's, not its own: a clock of its that runs
// more than 2 s behind both is not allowed for.
//
// Seed 004's layout forces the listing: a task's state is which of its
// names exist, in one flat directory, and the lock files hold the leases,
// so the next claimable task is known only after every name is seen and
// every lock is read. The lstats are the view's (signatures, second links
// that inotify cannot vouch for); a one-call process could skip them for
// the names it does not open, which is not done.
//
// # Leases
//
// A lock's lease ends at expires_at, or claimed_at (heartbeat) + Lease when
// it has none, or earlier when the file has not changed for a whole lease
// on this host's clock (the Kubernetes Lease rule), so a writer whose clock
// runs ahead cannot hold a task forever. Durations are whole durations: the
// seed's own check reads timedelta.seconds, which drops whole days, and its
// `if` tests python's exit status, so it re-claims live locks; claimdeck
// compares properly and fences out whoever it displaced.
//
// # Writes
//
// Every claimdeck write holds the directory's write lock: a mutex in the
// process, then flock(2) on .claimdeck.flock, which the kernel drops when a
// process dies. The flock is waited for at most 15 s and no longer than
// the caller's context; a write that gives up names the pid holding it. Within it:
//
//   - claim re-reads the task, writes a private temp file and link()s it to
//     {id}.lock; EEXIST is CONFLICT. A dead holder's lock (a rescue, a grace
//     after its lease ended) is first moved to its held name and re-read:
//     only if it is byte for byte the lock judged dead is the new lock
//     published, and then the old one goes to archive/; anything else is
//     linked back.
//   - heartbeat checks the token, writes a temp file, checks the lock's
//     inode, size and mtime once more and renames the temp file over it, so
//     the name is never empty (an empty name would look like a free task).
//   - complete, block, review, cancel, fail and an agent's hand-off rename
//     the lock to its held name, check the token there, and only then
//     publish the .done or .failed with link(), which never overwrites (an
//     older marker of the task goes to archive/ first), or the .queued,
//     claimdeck's own file, by rename. A lock that turns out not to be the
//     holder's is linked back; if its name was taken meanwhile it goes to
//     archive/ — never deleted.
//   - human actions do the same with the version the human saw (a hash of
//     the deciding file's bytes, or of the tasks-file entry) and answer
//     CONFLICT carrying the task as it is now.
//
// # What is left open
//
// The flock orders claimdeck processes; the link and rename steps are what
// protect against writers that ignore it:
//
//   - The seed's snippets take no lock. Its claim overwrites whatever lock
//     is there (cat >), its complete is a blind mv, and it rewrites files in
//     place, so a reader can catch a half-written file: claimdeck re-reads
//     a file whose size or mtime moved while it was read, shows what stays
//     broken as a problem, and never acts on a broken task. A seed write
//     landing between claimdeck's last check and its rename in heartbeat
//     (microseconds) is overwritten, as seed writers overwrite each other.
//   - While complete or a human action has moved the lock aside and not yet
//     linked the new file, claimdeck's readers find the held file and read
//     the task as still claimed, and so they do if the writer dies there;
//     the seed's snippets, which skip hidden files, see no lock for those
//     microseconds (or, after a crash, until the next claimdeck change of
//     the task puts it back).
//   - archive/ that is a link, a FIFO or a file is neither read nor
//     written through: polls and writes fail with MISCONFIGURED naming
//     it until it is a directory again, and no write starts meanwhile.
//   - flock between hosts works on NFS only through its lock manager
//     (Linux maps flock onto POSIX locks there); on a share without one,
//     the gap above is open to claimdeck processes on other hosts too.
//   - Times on a network share: mtime comes from the file server's clock,
//     expires_at from the writer's. A writer whose clock runs behind this
//     host's can lose its lease early by the difference; the Kubernetes rule
//     bounds the other direction only.
//   - Nothing is fsynced: a host crash can lose the last write, as it can
//     for the seed's own snippets.
//   - A lock file that stays broken (not JSON, no agent) holds its task
//     until a person repairs or moves it; claimdeck will not guess. A file
//     that vanishes between the directory listing and its read was renamed
//     by a writer: it is absent, not broken.
//   - The seed's cleanup deletes every lock older than a day, a human's
//     too; the task then reads as queued again.
//   - The seed's cleanup also archives claimdeck's parked markers (review,
//     blocked) and files nobody can read. One archived before the window
//     is counted as history unread, like every archived file, until the
//     polls' batches reach it (see Reading: up to ceil(N/256) polls for N
//     unread files, newest first); only then does the dashboard show it
//     again. A source restarted starts over, reading nothing on its first
//     poll. Get and a poll with no window read it at once.
//   - inotify hears no write through a shared mapping (mmap), and none
//     through a hard link made, after the scan looked, from another
//     directory: such a change is seen when the file's name is next
//     changed or the directory next listed.
package lockdir
