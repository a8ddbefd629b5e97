//! The file: one open file per process ([`AuditLog`]), one `write` per
//! record under one lock, size rotation, and reopening when another
//! program rotated the file away.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use chrono::Utc;
use sha2::{Digest, Sha256};

use super::chain::{ChainRecord, Tail, read_tail};
use super::record::{AuditRecord, rfc3339};
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

#[derive(Debug)]
pub(super) struct LogInner {
    /// The `host.audit*` keys.
    pub(super) settings: AuditSettings,
    /// The open file and the chain's head; held while a record is written
    /// (and the file rotated), so lines never interleave.
    pub(super) writer: Mutex<Writer>,
    /// Whether the last write failed: one log line per failure episode.
    pub(super) failing: AtomicBool,
}

impl AuditLog {
    /// A trail written to `settings.path`. Nothing is opened until the
    /// first record.
    pub fn new(settings: AuditSettings) -> AuditLog {
        AuditLog {
            inner: Arc::new(LogInner {
                settings,
                writer: Mutex::new(Writer::default()),
                failing: AtomicBool::new(false),
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

    /// Appends `record` (its `prev` set to the chain's head); with
    /// `durable`, syncs it to disk too.
    ///
    /// The line is written on the calling thread: the file stays open
    /// between records, so a record costs one `stat` of the path and one
    /// `write`. Only the sync of a `durable` record, which waits for the
    /// disk, goes to the blocking pool.
    pub async fn append(&self, record: &AuditRecord, durable: bool) -> Result<(), AuditError> {
        let written = {
            let mut writer = self.inner.writer.lock().expect("not poisoned");
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
    open: Option<OpenTrail>,
    /// SHA-256 (hex) of the last line of the trail: the next record's
    /// `prev`. `None` until the first file is opened, and in a trail that
    /// has no line yet.
    head: Option<String>,
    /// Whether `head` is known (the tail of the trail was read once).
    head_known: bool,
}

/// The file a [`Writer`] holds open.
#[derive(Debug)]
struct OpenTrail {
    file: Arc<File>,
    /// Device and inode, to notice that the path names another file.
    id: Option<(u64, u64)>,
}

impl Writer {
    /// Writes `record` as one line, its `prev` the chain's head; returns
    /// the file it went to (for a sync). Reopens the file first when the
    /// path no longer names it (renamed or deleted by an operator's log
    /// rotation), rotates it when the line would grow it past
    /// `max_bytes`. On an error the file is let go: the next record opens
    /// it afresh.
    pub(super) fn append(
        &mut self,
        settings: &AuditSettings,
        record: &AuditRecord,
    ) -> std::io::Result<Arc<File>> {
        let written = self.append_open(settings, record);
        if written.is_err() {
            self.open = None;
        }
        written
    }

    fn append_open(
        &mut self,
        settings: &AuditSettings,
        record: &AuditRecord,
    ) -> std::io::Result<Arc<File>> {
        // Opened first: the chain's head may be the file's last line.
        let len = self.current_len(settings)?;
        let mut record = record.clone();
        record.prev = self.head.clone();
        let mut line = serde_json::to_vec(&record).expect("a record serializes");
        if len.is_some_and(|len| len > 0 && len + line.len() as u64 + 1 > settings.max_bytes) {
            self.open = None;
            rotate(&settings.path, settings.keep)?;
            self.current_len(settings)?;
        }
        let file = self.open.as_ref().expect("opened above").file.clone();
        let hash = hex::encode(Sha256::digest(&line));
        line.push(b'\n');
        (&*file).write_all(&line)?;
        self.head = Some(hash);
        Ok(file)
    }

    /// Makes sure the file the path names is open (one `stat` when it
    /// is); its length when it is a regular file.
    fn current_len(&mut self, settings: &AuditSettings) -> std::io::Result<Option<u64>> {
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
        }
        let file = open_for_append(&settings.path)?;
        let meta = file.metadata()?;
        let regular = meta.is_file();
        if regular && meta.len() > 0 {
            match read_tail(&file, meta.len())? {
                Tail::Whole(last) => self.head = Some(last),
                Tail::Torn { last, torn_bytes } => {
                    // The process stopped mid-line: end the fragment, and
                    // say so in a record the chain goes on from.
                    let chain = ChainRecord {
                        time: rfc3339(Utc::now()),
                        record: "chain".into(),
                        prev: last,
                        torn_bytes,
                        reason: "the last line was torn (the process stopped while writing it); the chain goes on from the line before it".into(),
                    };
                    let mut line = serde_json::to_vec(&chain).expect("a record serializes");
                    let hash = hex::encode(Sha256::digest(&line));
                    line.insert(0, b'\n');
                    line.push(b'\n');
                    (&file).write_all(&line)?;
                    tracing::warn!(
                        path = %settings.path.display(),
                        torn_bytes,
                        "the audit trail's last line was torn; a `chain` record says so"
                    );
                    self.head = Some(hash);
                }
            }
        } else if !self.head_known {
            // A new file, maybe after a rotation this process did not see
            // end: the chain goes on from the newest rotated file.
            self.head = match File::open(rotated(&settings.path, 1)) {
                Ok(previous) => match previous.metadata()?.len() {
                    0 => None,
                    len => match read_tail(&previous, len)? {
                        Tail::Whole(last) => Some(last),
                        // Its torn fragment stays the last line.
                        Tail::Torn { .. } => None,
                    },
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(e),
            };
        }
        self.head_known = true;
        let len = regular
            .then(|| file.metadata().map(|m| m.len()))
            .transpose()?;
        self.open = Some(OpenTrail {
            file: Arc::new(file),
            id: file_id(&meta),
        });
        Ok(len)
    }
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

/// The trail's files, oldest first: `PATH.n` … `PATH.1`, `PATH`.
pub(super) fn trail_files(path: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = (1..=10_000)
        .map(|n| rotated(path, n))
        .take_while(|p| p.exists())
        .collect();
    files.reverse();
    files.push(path.to_path_buf());
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
        assert_eq!(ids(&s.path), ["9"]);
        assert_eq!(ids(&rotated(&s.path, 1)), ["8"]);
        assert_eq!(ids(&rotated(&s.path, 2)), ["7"]);
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
}
