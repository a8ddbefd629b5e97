//! The file: one open file per process ([`AuditLog`]), one `write` per
//! record under one lock, the `seq` and `prev` that link each line into
//! the chain, size rotation (and its `rotation` record), reopening when
//! another program rotated the file away, and the `flock` that makes the
//! process the file's one writer.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use chrono::Utc;
use sha2::{Digest, Sha256};

use super::budget::Budgets;
use super::chain::{ChainRecord, Tail, read_tail};
use super::record::{Line, RotationRecord, rfc3339};
use crate::config::AuditSettings;

/// Why a record was not written.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot write the audit trail {path} ({source}); free disk space or make the file writable (host.audit)"
)]
pub struct AuditError {
    /// The file.
    pub path: PathBuf,
    /// What the system said.
    #[source]
    pub source: std::io::Error,
}

/// The trail's file, shared by every call of the process.
#[derive(Debug, Clone)]
pub struct AuditLog {
    pub(super) inner: Arc<LogInner>,
}

/// Why a trail could not be opened: another process writes it.
#[derive(Debug, thiserror::Error)]
#[error(
    "another toolhost process writes the audit trail {} (host.audit), and a trail has one writer: \
     `toolhost serve` holds its file while it runs. Stop that process, or give this one a \
     configuration whose `host.audit` names another file (for `toolhost call`: its own file, \
     or no `host.audit`)",
    path.display()
)]
pub struct AuditLocked {
    /// The file.
    pub path: PathBuf,
}

#[derive(Debug)]
pub(super) struct LogInner {
    /// The `host.audit*` keys.
    pub(super) settings: AuditSettings,
    /// The open file and the chain's head; held while a record is written
    /// (and the file rotated), so lines never interleave. An async lock:
    /// a call whose record waits for another's yields its thread to other
    /// calls instead of blocking a worker of the runtime (measurement 22:
    /// 4–12% more calls per second with the trail on at 8 and 64 clients).
    pub(super) writer: tokio::sync::Mutex<Writer>,
    /// Whether the last write failed: one log line per failure episode.
    pub(super) failing: AtomicBool,
    /// Refused-call records each caller may still leave in its window.
    pub(super) budgets: Mutex<Budgets>,
}

impl AuditLog {
    /// The trail at `settings.path`, opened (created) and locked now, so
    /// that this process is its one writer from the start: refused when
    /// another process holds it. A file that cannot be opened for another
    /// reason (a full disk, a directory in its place) is not refused here:
    /// the first record fails, and mutations are refused while it does.
    pub fn open(settings: AuditSettings) -> Result<AuditLog, AuditLocked> {
        let log = AuditLog::new(settings);
        let opened = {
            let mut writer = log
                .inner
                .writer
                .try_lock()
                .expect("nothing writes before the trail is opened");
            let opened = writer.ensure_open(&log.inner.settings);
            if opened.is_err() {
                writer.open = None;
            }
            opened
        };
        match opened {
            Err(e) if is_held_elsewhere(&e) => Err(AuditLocked {
                path: log.inner.settings.path.clone(),
            }),
            _ => Ok(log),
        }
    }

    /// A trail written to `settings.path`; nothing is opened until the
    /// first record.
    pub(super) fn new(settings: AuditSettings) -> AuditLog {
        AuditLog {
            inner: Arc::new(LogInner {
                settings,
                writer: tokio::sync::Mutex::new(Writer::default()),
                failing: AtomicBool::new(false),
                budgets: Mutex::new(Budgets::default()),
            }),
        }
    }

    /// The settings it writes with.
    pub fn settings(&self) -> &AuditSettings {
        &self.inner.settings
    }

    /// Whether the latest write failed.
    pub fn is_failing(&self) -> bool {
        self.inner.failing.load(Ordering::SeqCst)
    }

    /// Appends `record` (its `seq` and `prev` set by the chain's head); with
    /// `durable`, syncs it to disk too.
    ///
    /// The line is written on the calling thread: the file stays open
    /// between records, so a record costs one `stat` of the path and one
    /// `write`. Only the sync of a `durable` record, which waits for the
    /// disk, goes to the blocking pool.
    pub(super) async fn append(&self, record: &impl Line, durable: bool) -> Result<(), AuditError> {
        let written = {
            let mut writer = self.inner.writer.lock().await;
            writer.append(&self.inner.settings, record)
        };
        let written = match written {
            Ok(file) if durable => tokio::task::spawn_blocking(move || file.sync_data())
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e))),
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        };
        match written {
            Ok(()) => {
                if self.inner.failing.swap(false, Ordering::SeqCst) {
                    tracing::info!(
                        path = %self.inner.settings.path.display(),
                        "the audit trail is writable again; mutating calls run again"
                    );
                }
                Ok(())
            }
            Err(source) => {
                crate::metrics::audit_write_failure();
                let error = AuditError {
                    path: self.inner.settings.path.clone(),
                    source,
                };
                if !self.inner.failing.swap(true, Ordering::SeqCst) {
                    tracing::error!(
                        "{error}; until it can be written, calls that would change data are refused and read-only calls go on unrecorded"
                    );
                }
                Err(error)
            }
        }
    }
}

/// The trail's open file and the head of its hash chain.
#[derive(Debug, Default)]
pub(super) struct Writer {
    /// The file records go to, while the path still names it.
    pub(super) open: Option<OpenTrail>,
    /// The file whose `flock` this process holds: the open one or, while
    /// writing fails, the one it wrote last (a reopen of the same file
    /// needs no second lock).
    locked: Option<OpenTrail>,
    /// SHA-256 (hex) of the last line of the trail: the next record's
    /// `prev`. `None` until the first file is opened, and in a trail that
    /// has no line yet.
    head: Option<String>,
    /// The `seq` of the trail's last line; 0 when it has none (no line
    /// yet, or lines written before the trail was numbered).
    seq: u64,
    /// Whether `head` is known (the tail of the trail was read once).
    head_known: bool,
}

/// A file a [`Writer`] holds open.
#[derive(Debug, Clone)]
pub(super) struct OpenTrail {
    file: Arc<File>,
    /// Device and inode, to notice that the path names another file.
    id: Option<(u64, u64)>,
}

impl Writer {
    /// Writes `line`, its `seq` and `prev` the chain's head; returns the
    /// file it went to (for a sync). Reopens the file first when the path
    /// no longer names it (renamed or deleted by an operator's log
    /// rotation), rotates it when the line would grow it past
    /// `max_bytes`. On an error the file is let go: the next record opens
    /// it afresh.
    pub(super) fn append(
        &mut self,
        settings: &AuditSettings,
        line: &impl Line,
    ) -> std::io::Result<Arc<File>> {
        let written = self.append_open(settings, line);
        if written.is_err() {
            self.open = None;
        }
        written
    }

    fn append_open(
        &mut self,
        settings: &AuditSettings,
        line: &impl Line,
    ) -> std::io::Result<Arc<File>> {
        // Opened first: the chain's head may be the file's last line.
        let len = self.ensure_open(settings)?;
        let mut bytes = self.linked(line);
        if len.is_some_and(|len| len > 0 && len + bytes.len() as u64 + 1 > settings.max_bytes) {
            let rotated_file = self.open.take().expect("opened above").file;
            let kept = kept_after_rotation(&rotated_file, settings.keep)?;
            rotate(&settings.path, settings.keep)?;
            self.ensure_open(settings)?;
            let file = self.open.as_ref().expect("opened above").file.clone();
            self.write_line(&file, &RotationRecord::new("size", Some(kept)))?;
            // Linked again: the rotation record is the line before it now.
            bytes = self.linked(line);
        }
        let file = self.open.as_ref().expect("opened above").file.clone();
        self.write_linked(&file, bytes)?;
        Ok(file)
    }

    /// `line` serialized with the chain's next `seq` and `prev`.
    fn linked(&self, line: &impl Line) -> Vec<u8> {
        let mut line = line.clone();
        line.link(self.seq + 1, self.head.clone());
        serde_json::to_vec(&line).expect("a record serializes")
    }

    /// Writes `line` to `file` as the chain's next line, in one `write`.
    fn write_line(&mut self, file: &File, line: &impl Line) -> std::io::Result<()> {
        let bytes = self.linked(line);
        self.write_linked(file, bytes)
    }

    /// Writes `bytes`, a line [`Writer::linked`] made for the chain's next
    /// place, to `file`, in one `write`.
    fn write_linked(&mut self, file: &File, mut bytes: Vec<u8>) -> std::io::Result<()> {
        let hash = hex::encode(Sha256::digest(&bytes));
        bytes.push(b'\n');
        (&*file).write_all(&bytes)?;
        self.head = Some(hash);
        self.seq += 1;
        Ok(())
    }

    /// Makes sure the file the path names is open and locked (one `stat`
    /// when it is); its length when it is a regular file.
    pub(super) fn ensure_open(&mut self, settings: &AuditSettings) -> std::io::Result<Option<u64>> {
        let mut moved = false;
        if let Some(open) = &self.open {
            match std::fs::metadata(&settings.path) {
                Ok(meta) if open.id.is_some() && file_id(&meta) == open.id => {
                    return Ok(meta.is_file().then_some(meta.len()));
                }
                Ok(_) => tracing::info!(
                    path = %settings.path.display(),
                    "the audit trail's path names another file now (rotated by another program); writing to the new one"
                ),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => tracing::info!(
                    path = %settings.path.display(),
                    "the audit trail was removed (rotated by another program); beginning a new file"
                ),
                Err(e) => return Err(e),
            }
            self.open = None;
            moved = true;
        }
        let file = open_for_append(&settings.path)?;
        let meta = file.metadata()?;
        let regular = meta.is_file();
        let trail = OpenTrail {
            file: Arc::new(file),
            id: file_id(&meta),
        };
        if regular {
            self.lock(&trail)?;
        }
        let file = &trail.file;
        if regular && meta.len() > 0 {
            match read_tail(file, meta.len())? {
                Tail::Whole { hash, seq } => {
                    self.head = Some(hash);
                    self.seq = seq.unwrap_or(0);
                }
                Tail::Torn { last, torn_bytes } => {
                    // The process stopped mid-line: end the fragment, and
                    // say so in a record the chain goes on from.
                    (self.head, self.seq) = match last {
                        Some((hash, seq)) => (Some(hash), seq.unwrap_or(0)),
                        None => (None, 0),
                    };
                    let chain = ChainRecord {
                        time: rfc3339(Utc::now()),
                        record: "chain".into(),
                        torn_bytes,
                        reason: "the last line was torn (the process stopped while writing it); the chain goes on from the line before it".into(),
                        seq: None,
                        prev: None,
                    };
                    // The newline ends the fragment, in the same `write`.
                    let mut bytes = vec![b'\n'];
                    bytes.extend(self.linked(&chain));
                    let hash = hex::encode(Sha256::digest(&bytes[1..]));
                    bytes.push(b'\n');
                    (&**file).write_all(&bytes)?;
                    self.head = Some(hash);
                    self.seq += 1;
                    tracing::warn!(
                        path = %settings.path.display(),
                        torn_bytes,
                        "the audit trail's last line was torn; a `chain` record says so"
                    );
                }
            }
        } else if !self.head_known {
            // A new file, maybe after a rotation this process did not see
            // end: the chain goes on from the newest rotated file.
            (self.head, self.seq) = match File::open(rotated(&settings.path, 1)) {
                Ok(previous) => match previous.metadata()?.len() {
                    0 => (None, 0),
                    len => match read_tail(&previous, len)? {
                        Tail::Whole { hash, seq } => (Some(hash), seq.unwrap_or(0)),
                        // Its torn fragment stays the last line.
                        Tail::Torn { .. } => (None, 0),
                    },
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, 0),
                Err(e) => return Err(e),
            };
        } else if moved && regular {
            // Another program rotated the file away: the new file says so
            // first, and that the writer cannot know what it kept.
            self.write_line(file, &RotationRecord::new("moved", None))?;
        }
        self.head_known = true;
        let len = regular
            .then(|| file.metadata().map(|m| m.len()))
            .transpose()?;
        self.open = Some(trail);
        Ok(len)
    }

    /// Takes the `flock` of `trail` unless this process holds it already,
    /// and lets go of the file it held before: a trail has one writer.
    fn lock(&mut self, trail: &OpenTrail) -> std::io::Result<()> {
        if trail.id.is_some() && self.locked.as_ref().is_some_and(|l| l.id == trail.id) {
            return Ok(());
        }
        lock_exclusive(&trail.file)?;
        self.locked = Some(trail.clone());
        Ok(())
    }
}

/// What another process holding the trail's lock looks like as an I/O
/// error: the write fails, and [`AuditLog::open`] says who holds it.
#[derive(Debug)]
struct HeldElsewhere;

impl std::fmt::Display for HeldElsewhere {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("another toolhost process holds the file's lock")
    }
}

impl std::error::Error for HeldElsewhere {}

fn is_held_elsewhere(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<HeldElsewhere>())
}

/// Takes an exclusive `flock` of `file` without waiting; held until the
/// file is closed, by this process's exit at the latest.
#[cfg(unix)]
fn lock_exclusive(file: &File) -> std::io::Result<()> {
    use rustix::fs::{FlockOperation, flock};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(()),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Err(std::io::Error::new(
            std::io::ErrorKind::WouldBlock,
            HeldElsewhere,
        )),
        Err(e) => Err(e.into()),
    }
}

/// Without `flock`, one writer per file is the operator's to keep.
#[cfg(not(unix))]
fn lock_exclusive(_file: &File) -> std::io::Result<()> {
    Ok(())
}

/// The `kept` of the `rotation` record after `file` is rotated: the first
/// `seq` of each rotated file kept, oldest first. It grows from the
/// `rotation` record that opens `file`, never from the files on disk, so
/// that a file deleted by hand stays missing.
fn kept_after_rotation(file: &File, keep: u32) -> std::io::Result<Vec<Option<u64>>> {
    let first = first_line(file)?;
    let field = |name: &str| first.as_ref().and_then(|v| v.get(name));
    let mut kept: Vec<Option<u64>> = match field("record").and_then(|r| r.as_str()) {
        Some("rotation") => field("kept")
            .and_then(|k| serde_json::from_value(k.clone()).ok())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    kept.push(field("seq").and_then(|s| s.as_u64()));
    let excess = kept.len().saturating_sub(keep as usize);
    kept.drain(..excess);
    Ok(kept)
}

/// The longest first line [`first_line`] reads: a `rotation` record, or a
/// record whose client text is bounded.
const FIRST_LINE_MAX: u64 = 1 << 20;

/// The first line of `file` as JSON, if it is one.
fn first_line(file: &File) -> std::io::Result<Option<serde_json::Value>> {
    use std::io::{BufRead, BufReader, Seek, SeekFrom};
    let mut file = file;
    file.seek(SeekFrom::Start(0))?;
    let mut line = Vec::new();
    BufReader::new(file.take(FIRST_LINE_MAX)).read_until(b'\n', &mut line)?;
    Ok(serde_json::from_slice(&line).ok())
}

/// The device and inode of a file.
#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

/// Without device and inode, a file is reopened for every record.
#[cfg(not(unix))]
fn file_id(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

fn open_for_append(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    // Read too: the chain goes on from the file's last line.
    options.read(true).create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// `PATH.n` for a rotated file.
pub(super) fn rotated(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// `PATH` becomes `PATH.1`, `PATH.1` becomes `PATH.2`, …; what would pass
/// `PATH.keep` is deleted.
fn rotate(path: &Path, keep: u32) -> std::io::Result<()> {
    let ignore_missing = |r: std::io::Result<()>| match r {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    };
    ignore_missing(std::fs::remove_file(rotated(path, keep)))?;
    for n in (1..keep).rev() {
        ignore_missing(std::fs::rename(rotated(path, n), rotated(path, n + 1)))?;
    }
    std::fs::rename(path, rotated(path, 1))
}

/// The trail's files, oldest first: every `PATH.n` there is, highest `n`
/// first (a gap in the numbers does not hide the files beyond it), then
/// `PATH`; with each rotated file's `n`.
pub(super) fn trail_files(path: &Path) -> Vec<(PathBuf, Option<u32>)> {
    let mut numbers: Vec<u32> = Vec::new();
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if let (Some(name), Ok(entries)) = (path.file_name(), std::fs::read_dir(dir)) {
        let prefix = format!("{}.", name.to_string_lossy());
        for entry in entries.flatten() {
            let entry = entry.file_name();
            let entry = entry.to_string_lossy();
            if let Some(n) = entry
                .strip_prefix(&prefix)
                .and_then(|n| n.parse::<u32>().ok().filter(|v| v.to_string() == n))
                .filter(|n| *n > 0)
            {
                numbers.push(n);
            }
        }
    }
    numbers.sort_unstable_by(|a, b| b.cmp(a));
    let mut files: Vec<(PathBuf, Option<u32>)> = numbers
        .into_iter()
        .map(|n| (rotated(path, n), Some(n)))
        .collect();
    files.push((path.to_path_buf(), None));
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::testing::{ids, sample, settings};
    use crate::audit::verify;

    #[test]
    fn the_file_rotates_at_its_size_keeps_so_many_and_the_chain_spans_them() {
        let dir = tempfile::tempdir().unwrap();
        let line = serde_json::to_vec(&sample("0")).unwrap().len() as u64 + 70;
        // One record per file.
        let s = settings(dir.path(), line + 10, 2);
        let mut writer = Writer::default();
        for i in 0..10 {
            writer.append(&s, &sample(&i.to_string())).unwrap();
        }
        // Each file begun by a rotation says so first (`-`: no call id).
        assert_eq!(ids(&s.path), ["-", "9"]);
        assert_eq!(ids(&rotated(&s.path, 1)), ["-", "8"]);
        assert_eq!(ids(&rotated(&s.path, 2)), ["-", "7"]);
        assert!(!rotated(&s.path, 3).exists());
        let report = verify(&s.path).unwrap().unwrap();
        assert_eq!(report.records, 3, "{report:?}");
        assert_eq!(report.files.len(), 3);
    }

    #[test]
    fn a_directory_in_the_files_place_is_an_error_naming_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path(), 1 << 20, 1);
        std::fs::create_dir(&s.path).unwrap();
        let log = AuditLog::new(s);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let record = sample("1");
        let error = runtime
            .block_on(log.append(&record, false))
            .unwrap_err()
            .to_string();
        assert!(error.contains("host.audit"), "{error}");
        assert!(log.is_failing());
    }

    #[test]
    fn a_second_writer_of_the_same_file_is_refused_naming_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path(), 1 << 20, 1);
        let first = AuditLog::open(s.clone()).unwrap();
        let error = AuditLog::open(s.clone()).unwrap_err().to_string();
        assert!(
            error.contains("host.audit") && error.contains("toolhost serve"),
            "{error}"
        );
        drop(first);
        AuditLog::open(s).expect("free once the first writer is gone");
    }
}
