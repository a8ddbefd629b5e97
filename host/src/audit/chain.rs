//! The hash chain: every line's `prev` names the line before it, and its
//! `seq` counts on from it. The tail of a trail read at a start (so the
//! chain goes on), the `chain` mark after a torn line, and [`verify`],
//! which also says which records are missing.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::record::Line;
use super::writer::{rotated, trail_files};

/// The record that restarts a trail's chain after a torn line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct ChainRecord {
    /// When it was written.
    pub(super) time: String,
    /// Always `chain`.
    pub(super) record: String,
    /// Bytes of the torn line.
    pub(super) torn_bytes: u64,
    /// What happened, in words.
    pub(super) reason: String,
    /// Its number: one more than the last whole line's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) seq: Option<u64>,
    /// SHA-256 of the last whole line before the torn one, if any.
    pub(super) prev: Option<String>,
}

impl Line for ChainRecord {
    fn link(&mut self, seq: u64, prev: Option<String>) {
        self.seq = Some(seq);
        self.prev = prev;
    }
}

/// How a non-empty file ends.
#[derive(Debug, PartialEq)]
pub(super) enum Tail {
    /// With a whole line: its SHA-256 (hex, without the newline) and its
    /// `seq`, if it has one.
    Whole { hash: String, seq: Option<u64> },
    /// With a line cut short (no newline): the SHA-256 and `seq` of the
    /// whole line before it, if any, and the cut line's length.
    Torn {
        last: Option<(String, Option<u64>)>,
        torn_bytes: u64,
    },
}

/// The longest last line whose `seq` is read; longer ones were written
/// before client text was bounded.
const SEQ_LINE_MAX: u64 = 4 << 20;

/// Bytes read at a time from the end of a file.
const TAIL_CHUNK: u64 = 64 << 10;

/// How the file of `len` bytes ends, reading only its last lines.
pub(super) fn read_tail(file: &File, len: u64) -> std::io::Result<Tail> {
    let mut last_byte = [0u8];
    read_at(file, len - 1, &mut last_byte)?;
    let torn = last_byte[0] != b'\n';
    let content_end = if torn { len } else { len - 1 };
    // The newline that ends the last whole line (or starts the fragment).
    let cut = newline_before(file, content_end)?;
    let hash_line = |start: u64, end: u64| -> std::io::Result<(String, Option<u64>)> {
        let mut hasher = Sha256::new();
        let mut at = start;
        let mut buf = vec![0u8; TAIL_CHUNK as usize];
        let mut whole = Vec::new();
        while at < end {
            let n = (end - at).min(TAIL_CHUNK) as usize;
            read_at(file, at, &mut buf[..n])?;
            hasher.update(&buf[..n]);
            if end - start <= SEQ_LINE_MAX {
                whole.extend_from_slice(&buf[..n]);
            }
            at += n as u64;
        }
        let seq = serde_json::from_slice::<Value>(&whole)
            .ok()
            .and_then(|v| v.get("seq").and_then(Value::as_u64));
        Ok((hex::encode(hasher.finalize()), seq))
    };
    if !torn {
        let start = cut.map_or(0, |n| n + 1);
        let (hash, seq) = hash_line(start, content_end)?;
        return Ok(Tail::Whole { hash, seq });
    }
    let torn_bytes = len - cut.map_or(0, |n| n + 1);
    let last = match cut {
        Some(end) => {
            let start = newline_before(file, end)?.map_or(0, |n| n + 1);
            Some(hash_line(start, end)?)
        }
        None => None,
    };
    Ok(Tail::Torn { last, torn_bytes })
}

/// The offset of the last newline before `end`, reading backwards.
fn newline_before(file: &File, end: u64) -> std::io::Result<Option<u64>> {
    let mut buf = vec![0u8; TAIL_CHUNK as usize];
    let mut chunk_end = end;
    while chunk_end > 0 {
        let start = chunk_end.saturating_sub(TAIL_CHUNK);
        let chunk = &mut buf[..(chunk_end - start) as usize];
        read_at(file, start, chunk)?;
        if let Some(i) = chunk.iter().rposition(|b| *b == b'\n') {
            return Ok(Some(start + i as u64));
        }
        chunk_end = start;
    }
    Ok(None)
}

/// Fills `buf` from `file` at `offset`.
fn read_at(file: &File, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = file;
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buf)
}

/// What [`verify`] found in an intact trail.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainReport {
    /// Records walked (`chain` and `rotation` records not counted).
    pub records: u64,
    /// Files walked, oldest first.
    pub files: Vec<PathBuf>,
    /// SHA-256 of the trail's last line: what the next record's `prev`
    /// will be. Kept elsewhere, it anchors the end of the trail too.
    pub head: Option<String>,
    /// What is intact but worth knowing: torn lines marked by a `chain`
    /// record, records written before the chain existed, a rotation by
    /// another program.
    pub notes: Vec<String>,
}

/// Where [`verify`] found the chain broken.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}, line {line}: {what}", file.display())]
pub struct ChainBreak {
    /// The file.
    pub file: PathBuf,
    /// The line, counted from 1 in that file.
    pub line: u64,
    /// What is wrong, in words.
    pub what: String,
}

/// One line already walked.
struct Walked {
    file: PathBuf,
    line: u64,
    len: u64,
    hash: String,
    /// Whether it is a JSON object (a record).
    is_record: bool,
    /// Whether it ended with a newline.
    whole: bool,
    /// The hash of the line before it; `None` for the first line walked
    /// (its predecessor may be in a file rotated away).
    before: Option<Option<String>>,
}

/// A `rotation` record's `kept`: the first `seq` of each rotated file
/// kept, oldest first (`None` for one begun before numbering); `None` as a
/// whole after a rotation by another program.
type Kept = Option<Vec<Option<u64>>>;

/// What [`verify`] knows of the numbering so far.
#[derive(Default)]
struct Numbering {
    /// The `seq` of the last numbered line walked.
    last: Option<u64>,
    /// The first numbered line walked: its `seq`, file and line.
    first: Option<(u64, PathBuf, u64)>,
    /// The latest `rotation` record walked: its `kept`, file and line.
    rotation: Option<(Kept, PathBuf, u64)>,
    /// The number of the rotated file walked before the current one.
    file_before: Option<Option<u32>>,
}

/// Walks the trail at `path` (its rotated files included, oldest first)
/// and checks its hash chain and numbering: every line's `prev` is the
/// SHA-256 of the line before it and its `seq` one more, across files. A
/// torn line (the process stopped while writing it) is intact only when
/// the `chain` record the writer added after it says so. The first line
/// walked may name any `prev`, but the trail must begin where the latest
/// `rotation` record says the rotated files kept begin (at `seq` 1 when
/// it never rotated): a deleted rotated file, the oldest files deleted or
/// lines cut from the front are breaks, named with the records missing.
/// Lines written before the chain or the numbering existed (no `prev`, no
/// `seq`) may open the trail.
///
/// `Err` is a file that cannot be read; `Ok(Err)` the first break.
pub fn verify(path: &Path) -> anyhow::Result<Result<ChainReport, ChainBreak>> {
    let mut report = ChainReport {
        records: 0,
        files: Vec::new(),
        head: None,
        notes: Vec::new(),
    };
    let mut previous: Option<Walked> = None;
    let mut unchained = 0u64;
    let mut numbering = Numbering::default();
    for (file, number) in trail_files(path) {
        let mut reader = match File::open(&file) {
            Ok(f) => BufReader::new(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => anyhow::bail!("cannot read the audit trail {}: {e}", file.display()),
        };
        report.files.push(file.clone());
        // Rotated files whose numbers lie between this one and the one
        // walked before it are not there.
        let absent: Vec<PathBuf> = match (numbering.file_before, number) {
            (Some(Some(before)), Some(now)) => {
                (now + 1..before).rev().map(|n| rotated(path, n)).collect()
            }
            (Some(Some(before)), None) => (1..before).rev().map(|n| rotated(path, n)).collect(),
            _ => Vec::new(),
        };
        numbering.file_before = Some(number);
        let mut number_in_file = 0u64;
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let read = reader.read_until(b'\n', &mut buf).map_err(|e| {
                anyhow::anyhow!("cannot read the audit trail {}: {e}", file.display())
            })?;
            if read == 0 {
                break;
            }
            number_in_file += 1;
            let line = number_in_file;
            let whole = buf.last() == Some(&b'\n');
            if whole {
                buf.pop();
            }
            let broken = |what: String| {
                Ok(Err(ChainBreak {
                    file: file.clone(),
                    line,
                    what,
                }))
            };
            let parsed = serde_json::from_slice::<Value>(&buf)
                .ok()
                .filter(Value::is_object);
            let hash = hex::encode(Sha256::digest(&buf));
            // A line that is no record must be a torn one, and the next
            // line the `chain` record saying so.
            if let Some(p) = previous.as_ref().filter(|p| !p.is_record) {
                let marks_it = parsed.as_ref().is_some_and(|v| {
                    v["record"] == "chain" && v["torn_bytes"].as_u64() == Some(p.len)
                });
                if !marks_it {
                    return Ok(Err(ChainBreak {
                        file: p.file.clone(),
                        line: p.line,
                        what:
                            "not an audit record, and no `chain` record after it says it was torn"
                                .into(),
                    }));
                }
            }
            if let Some(record) = &parsed {
                let prev = match record.get("prev") {
                    Some(Value::String(prev)) => Some(Some(prev.clone())),
                    Some(Value::Null) => Some(None),
                    _ => None,
                };
                let Some(prev) = prev else {
                    if previous
                        .as_ref()
                        .is_none_or(|_| unchained == report.records)
                    {
                        // Written before the chain existed, at the trail's start.
                        unchained += 1;
                        report.records += 1;
                        previous = Some(Walked {
                            file: file.clone(),
                            line,
                            len: buf.len() as u64,
                            hash,
                            is_record: true,
                            whole,
                            before: None,
                        });
                        continue;
                    }
                    return broken(
                        "the record has no `prev`: it was not written by the trail's writer".into(),
                    );
                };
                // The records missing before this line, by number.
                let seq = record.get("seq").and_then(Value::as_u64);
                let missing = match (seq, numbering.last) {
                    (Some(seq), Some(last)) if seq > last + 1 => {
                        let held = if absent.is_empty() {
                            String::new()
                        } else {
                            format!(
                                " ({} held them, and is not there)",
                                absent
                                    .iter()
                                    .map(|f| f.display().to_string())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        };
                        Some(format!(
                            "records {} to {} are missing before this line{held}",
                            last + 1,
                            seq - 1
                        ))
                    }
                    _ => None,
                };
                if record["record"] == "chain" {
                    if let Some(p) = &previous {
                        let before_matches = p.before.as_ref().is_none_or(|b| *b == prev);
                        if record["torn_bytes"].as_u64() != Some(p.len) || !before_matches {
                            return broken(format!(
                                "a `chain` record that does not match the torn line before it (line {} of {})",
                                p.line,
                                p.file.display()
                            ));
                        }
                        report.notes.push(format!(
                            "{}, line {}: a torn line (the process stopped while writing it), marked by the `chain` record after it",
                            p.file.display(),
                            p.line
                        ));
                    }
                } else {
                    if let Some(p) = &previous
                        && prev.as_ref() != Some(&p.hash)
                    {
                        let what = format!(
                            "its `prev` is not the SHA-256 of the line before it ({}, line {}): a line was changed, removed, inserted or moved here",
                            p.file.display(),
                            p.line
                        );
                        return broken(match missing {
                            Some(missing) => format!("{missing}; {what}"),
                            None => what,
                        });
                    }
                    if record["record"] != "rotation" {
                        report.records += 1;
                    }
                }
                match (seq, numbering.last) {
                    (None, Some(_)) => {
                        return broken(
                            "the record has no `seq` after numbered ones: it was not written by the trail's writer".into(),
                        );
                    }
                    (Some(seq), Some(last)) if seq != last + 1 => {
                        return broken(missing.unwrap_or_else(|| {
                            format!("its `seq` {seq} does not follow {last}, the line before it's: a line was inserted or moved here")
                        }));
                    }
                    (Some(seq), None) => numbering.first = Some((seq, file.clone(), line)),
                    _ => {}
                }
                if seq.is_some() {
                    numbering.last = seq;
                }
                if record["record"] == "rotation" {
                    let kept = serde_json::from_value(record["kept"].clone()).ok();
                    numbering.rotation = Some((kept, file.clone(), line));
                }
            }
            let before = previous.as_ref().map(|p| Some(p.hash.clone()));
            previous = Some(Walked {
                file: file.clone(),
                line,
                len: buf.len() as u64,
                hash,
                is_record: parsed.is_some(),
                whole,
                before,
            });
        }
    }
    if report.files.is_empty() {
        anyhow::bail!(
            "there is no audit trail at {} (host.audit); it is written once a tool is called",
            path.display()
        );
    }
    if let Some(last) = &previous {
        if !last.is_record {
            if last.whole {
                return Ok(Err(ChainBreak {
                    file: last.file.clone(),
                    line: last.line,
                    what: "not an audit record".into(),
                }));
            }
            report.notes.push(format!(
                "{}, line {}: the trail ends with a torn line (the process stopped while writing it); the next start marks it",
                last.file.display(),
                last.line
            ));
        }
        report.head = Some(last.hash.clone());
    }
    // Where the trail must begin: where the latest rotation says the files
    // it kept begin, or at 1.
    if let Some((first, file, line)) = &numbering.first {
        let (start, why) = match &numbering.rotation {
            None => (
                Some(1),
                "the trail never rotated, so it begins at record 1".to_string(),
            ),
            Some((Some(kept), at, at_line)) => (
                Some(kept.first().copied().flatten().unwrap_or(1)),
                format!(
                    "the rotation at {}, line {at_line}, kept the rotated files from record {} on",
                    at.display(),
                    kept.first().copied().flatten().unwrap_or(1)
                ),
            ),
            Some((None, at, at_line)) => {
                report.notes.push(format!(
                    "{}, line {at_line}: another program rotated the file away there; whether the records before {} are all there cannot be checked from these files",
                    at.display(),
                    first
                ));
                (None, String::new())
            }
        };
        if let Some(start) = start
            && *first > start
        {
            return Ok(Err(ChainBreak {
                file: file.clone(),
                line: *line,
                what: format!(
                    "records {start} to {} are missing at the trail's start: its oldest lines or rotated files were removed ({why})",
                    first - 1
                ),
            }));
        }
    }
    if unchained > 0 {
        report.notes.insert(
            0,
            format!("the first {unchained} record(s) were written before the trail was chained (no `prev`)"),
        );
    }
    Ok(Ok(report))
}

#[cfg(test)]
mod tests {
    use std::fs::{File, OpenOptions};
    use std::io::Write;

    use super::*;
    use crate::audit::testing::{ids, sample, settings};
    use crate::audit::writer::{Writer, rotated};

    #[test]
    fn a_new_writer_goes_on_from_the_last_line_and_marks_a_torn_one() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path(), 1 << 20, 2);
        Writer::default().append(&s, &sample("a")).unwrap();
        Writer::default().append(&s, &sample("b")).unwrap();
        verify(&s.path).unwrap().unwrap();
        // The process stopped mid-line.
        let mut file = OpenOptions::new().append(true).open(&s.path).unwrap();
        let fragment = br#"{"time":"2026-11-25T"#;
        file.write_all(fragment).unwrap();
        let file = File::open(&s.path).unwrap();
        assert!(matches!(
            read_tail(&file, file.metadata().unwrap().len()).unwrap(),
            Tail::Torn { last: Some(_), torn_bytes } if torn_bytes == fragment.len() as u64
        ));
        let ended = verify(&s.path).unwrap().unwrap();
        assert!(
            ended.notes[0].contains("ends with a torn line"),
            "{ended:?}"
        );
        Writer::default().append(&s, &sample("c")).unwrap();
        assert_eq!(ids(&s.path), ["a", "b", "-", "-", "c"]);
        let report = verify(&s.path).unwrap().unwrap();
        assert_eq!(report.records, 3);
        assert!(
            report.notes[0].contains("line 3: a torn line"),
            "{report:?}"
        );
    }

    #[test]
    fn verify_names_the_line_changed_removed_or_moved() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path(), 1 << 20, 2);
        let mut writer = Writer::default();
        for i in 0..5 {
            writer.append(&s, &sample(&i.to_string())).unwrap();
        }
        let text = std::fs::read_to_string(&s.path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let check = |lines: Vec<String>| {
            std::fs::write(&s.path, lines.join("\n") + "\n").unwrap();
            verify(&s.path).unwrap().unwrap_err()
        };
        let owned = || lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        let mut edited = owned();
        edited[2] = edited[2].replace("\"id\":\"2\"", "\"id\":\"7\"");
        assert_eq!(check(edited).line, 4);
        let mut removed = owned();
        removed.remove(2);
        assert_eq!(check(removed).line, 3);
        let mut moved = owned();
        moved.swap(1, 2);
        assert_eq!(check(moved).line, 2);
        std::fs::write(&s.path, &text).unwrap();
        assert_eq!(verify(&s.path).unwrap().unwrap().records, 5);
    }

    #[test]
    fn verify_names_a_deleted_rotated_file_and_records_missing_at_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let line = serde_json::to_vec(&sample("0")).unwrap().len() as u64 + 300;
        // Two records per file, three rotated files kept.
        let s = settings(dir.path(), 2 * line, 3);
        let mut writer = Writer::default();
        for i in 0..12 {
            writer.append(&s, &sample(&i.to_string())).unwrap();
        }
        let report = verify(&s.path).unwrap().unwrap();
        assert_eq!(report.files.len(), 4, "{report:?}");
        let file = |n: u32| rotated(&s.path, n);
        let saved: Vec<Vec<u8>> = (1..=3).map(|n| std::fs::read(file(n)).unwrap()).collect();
        let restore = || {
            for (n, bytes) in (1..=3).zip(&saved) {
                std::fs::write(file(n), bytes).unwrap();
            }
        };
        std::fs::remove_file(file(2)).unwrap();
        let broken = verify(&s.path).unwrap().unwrap_err();
        assert_eq!((broken.file.clone(), broken.line), (file(1), 1), "{broken}");
        assert!(
            broken.what.contains("are missing before this line")
                && broken
                    .what
                    .contains(&format!("{} held them", file(2).display())),
            "{broken}"
        );
        restore();
        std::fs::remove_file(file(3)).unwrap();
        let broken = verify(&s.path).unwrap().unwrap_err();
        assert!(
            broken.what.contains("missing at the trail's start"),
            "{broken}"
        );
        restore();
        let text = String::from_utf8(saved[2].clone()).unwrap();
        std::fs::write(
            file(3),
            text.lines().skip(1).collect::<Vec<_>>().join("\n") + "\n",
        )
        .unwrap();
        let broken = verify(&s.path).unwrap().unwrap_err();
        assert!(
            broken.what.contains("missing at the trail's start"),
            "{broken}"
        );
        restore();
        assert!(verify(&s.path).unwrap().is_ok());
        // A trail that never rotated begins at 1.
        let single = tempfile::tempdir().unwrap();
        let s = settings(single.path(), 1 << 20, 3);
        let mut writer = Writer::default();
        for i in 0..3 {
            writer.append(&s, &sample(&i.to_string())).unwrap();
        }
        let text = std::fs::read_to_string(&s.path).unwrap();
        std::fs::write(
            &s.path,
            text.lines().skip(1).collect::<Vec<_>>().join("\n") + "\n",
        )
        .unwrap();
        let broken = verify(&s.path).unwrap().unwrap_err();
        assert!(
            broken
                .what
                .contains("records 1 to 1 are missing at the trail's start"),
            "{broken}"
        );
    }
}
