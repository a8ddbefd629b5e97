//! The trail read back for `toolhost audit`: [`read_trail`] gathers the
//! records of every file as [`TrailRow`]s, [`Filter`] and [`parse_since`] choose, and
//! [`print_table`] shows them.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use chrono::{DateTime, Utc};

use super::record::{AuditRecord, SuppressedRecord};
use super::writer::trail_files;

/// What `toolhost audit` shows.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    /// Only calls that began at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only calls of this tool (or reads, gets and completions of this
    /// target).
    pub tool: Option<String>,
    /// Only calls by this caller (`token:alice`, `http`, `stdio`).
    pub caller: Option<String>,
    /// Only calls from this network address (or block: `10.0.0.0/8`).
    pub client: Option<ipnet::IpNet>,
}

impl Filter {
    /// Whether `row` is one the filter selects.
    fn selects(&self, row: &TrailRow) -> bool {
        let record = &row.record;
        let tool = self
            .tool
            .as_ref()
            .is_none_or(|t| &record.tool == t || record.target.as_ref() == Some(t));
        let since = self.since.is_none_or(|since| {
            DateTime::parse_from_rfc3339(&record.time).is_ok_and(|t| t >= since)
        });
        let caller = self.caller.as_ref().is_none_or(|c| &record.caller == c);
        let client = self.client.is_none_or(|block| row.may_come_from(&block));
        tool && since && caller && client
    }
}

/// One row of the trail as `toolhost audit` shows it: a record, and for
/// a `suppressed` one, where the refusals it counts came from.
#[derive(Debug, Clone)]
pub struct TrailRow {
    /// The record (a `suppressed` one made into a row by `suppressed_row`).
    pub record: AuditRecord,
    /// A `suppressed` record's client addresses (over HTTP).
    pub suppressed_clients: Vec<std::net::IpAddr>,
    /// How many of a `suppressed` record's refusals came from addresses
    /// it does not name (past the record's bound).
    pub suppressed_from_others: u64,
}

impl TrailRow {
    /// A row of a record with no suppressed refusals.
    fn of(record: AuditRecord) -> TrailRow {
        TrailRow {
            record,
            suppressed_clients: Vec::new(),
            suppressed_from_others: 0,
        }
    }

    /// Whether the row may be of a call from an address in `block`: its
    /// record's client, or for a `suppressed` record, one of the addresses
    /// its refusals came from; a `suppressed` record that counts refusals
    /// from addresses it does not name is shown too (they may be from
    /// `block`).
    fn may_come_from(&self, block: &ipnet::IpNet) -> bool {
        let client = self
            .record
            .client
            .as_deref()
            .and_then(|a| a.parse::<std::net::IpAddr>().ok());
        client.is_some_and(|a| block.contains(&a))
            || self.suppressed_clients.iter().any(|a| block.contains(a))
            || self.suppressed_from_others > 0
    }
}

/// `--client` as written: an address (`203.0.113.9`) or a block
/// (`10.0.0.0/8`).
pub fn parse_client(text: &str) -> anyhow::Result<ipnet::IpNet> {
    crate::config::address_or_block(text).ok_or_else(|| {
        anyhow::anyhow!(
            "--client {text:?} is neither an address (203.0.113.9) nor a block (10.0.0.0/8)"
        )
    })
}

/// `--since` as written: an RFC 3339 time, or a duration back from `now`
/// such as `90s`, `15m`, `1h`, `2days`.
pub fn parse_since(text: &str, now: DateTime<Utc>) -> anyhow::Result<DateTime<Utc>> {
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Ok(time.with_timezone(&Utc));
    }
    let ago = humantime::parse_duration(text).map_err(|e| {
        anyhow::anyhow!(
            "--since {text:?} is neither an RFC 3339 time (2026-11-25T07:00:00Z) nor a duration (1h, 30m, 2days): {e}"
        )
    })?;
    let ago = chrono::TimeDelta::from_std(ago)
        .map_err(|_| anyhow::anyhow!("--since {text:?} reaches too far back"))?;
    now.checked_sub_signed(ago)
        .ok_or_else(|| anyhow::anyhow!("--since {text:?} reaches too far back"))
}

/// Reads the trail at `path` (its rotated files included, oldest first):
/// the `call` records, and the `intent` records of calls that have none
/// (the process stopped during the call). A line that is not a record is
/// reported and skipped.
pub fn read_trail(path: &Path) -> anyhow::Result<Vec<TrailRow>> {
    let mut records = Vec::new();
    let mut found = false;
    for (file, _) in trail_files(path) {
        let reader = match File::open(&file) {
            Ok(f) => BufReader::new(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => anyhow::bail!("cannot read the audit trail {}: {e}", file.display()),
        };
        found = true;
        for (n, line) in reader.lines().enumerate() {
            let line = line.map_err(|e| {
                anyhow::anyhow!("cannot read the audit trail {}: {e}", file.display())
            })?;
            if line.trim().is_empty() {
                continue;
            }
            let kind = serde_json::from_str::<serde_json::Value>(&line)
                .ok()
                .and_then(|v| v["record"].as_str().map(str::to_string));
            let parsed = match kind.as_deref() {
                // The chain's marks (after a torn line, at a rotation): no call.
                Some("chain" | "rotation") => continue,
                Some("suppressed") => {
                    serde_json::from_str::<SuppressedRecord>(&line).map(suppressed_row)
                }
                _ => serde_json::from_str::<AuditRecord>(&line).map(TrailRow::of),
            };
            match parsed {
                Ok(record) => records.push(record),
                Err(e) => eprintln!(
                    "warning: {} line {} is not an audit record ({e}); skipped",
                    file.display(),
                    n + 1
                ),
            }
        }
    }
    if !found {
        anyhow::bail!(
            "there is no audit trail at {} (host.audit); it is written once a tool is called",
            path.display()
        );
    }
    let finished: HashSet<String> = records
        .iter()
        .filter(|r| r.record.record == "call")
        .map(|r| r.record.id.clone())
        .collect();
    let mut intents: HashMap<String, TrailRow> = HashMap::new();
    let mut out = Vec::new();
    for row in records {
        match row.record.record.as_str() {
            "call" | "suppressed" | "approval" => out.push(row),
            _ if !finished.contains(&row.record.id) => {
                // The latest intent of an unfinished call says the most.
                intents.insert(row.record.id.clone(), row);
            }
            _ => {}
        }
    }
    for (_, mut intent) in intents {
        intent.record.result = "unfinished".into();
        out.push(intent);
    }
    out.sort_by(|a, b| a.record.time.cmp(&b.record.time));
    Ok(out)
}

/// A `suppressed` record as a row of the table: who, when, how many
/// refused calls were not recorded, their codes, and the addresses they
/// came from.
fn suppressed_row(s: SuppressedRecord) -> TrailRow {
    let mut addresses: Vec<String> = s
        .clients
        .iter()
        .map(|(address, n)| format!("{address} x{n}"))
        .collect();
    if s.other_clients > 0 {
        addresses.push(format!("others x{}", s.other_clients));
    }
    let record = AuditRecord {
        time: s.time,
        record: s.record,
        id: String::new(),
        caller: s.caller,
        protocol: None,
        session: None,
        client: (!addresses.is_empty()).then(|| addresses.join(", ")),
        tool: "-".into(),
        plugin: String::new(),
        file: String::new(),
        digest: String::new(),
        read_only: true,
        arguments_sha256: String::new(),
        arguments: None,
        confirmation: None,
        policy: None,
        credentials: Vec::new(),
        approval: None,
        cost: None,
        upstream: Vec::new(),
        result: format!("suppressed: {} refused calls not recorded", s.dropped),
        issues: s
            .issues
            .iter()
            .map(|(code, n)| format!("{code} x{n}"))
            .collect(),
        duration_ms: 0,
        kind: None,
        target: None,
        cut: s.cut,
        seq: s.seq,
        prev: s.prev,
    };
    TrailRow {
        record,
        // The writer wrote addresses; anything else is not one.
        suppressed_clients: s.clients.keys().filter_map(|a| a.parse().ok()).collect(),
        suppressed_from_others: s.other_clients,
    }
}

/// Writes the records `filter` selects as a table: time, caller, its
/// network address (over HTTP), tool (or
/// a read's, get's or completion's kind and target), confirmation,
/// upstream requests, result, duration. Every cell is escaped as the log
/// escapes a guest's text: a client's tool name cannot forge a row or
/// move the terminal's cursor.
pub fn print_table(
    rows: &[TrailRow],
    filter: &Filter,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let header = [
        "TIME",
        "CALLER",
        "CLIENT",
        "TOOL",
        "CONFIRMATION",
        "UPSTREAM",
        "RESULT",
        "MS",
    ];
    let rows: Vec<[String; 8]> = rows
        .iter()
        .filter(|row| filter.selects(row))
        .map(|TrailRow { record: r, .. }| {
            let confirmation = r
                .confirmation
                .as_ref()
                .map_or("-".to_string(), |c| format!("{} ({})", c.outcome, c.via));
            let upstream = if r.upstream.is_empty() {
                "-".to_string()
            } else {
                r.upstream
                    .iter()
                    .map(|u| {
                        let status = u
                            .status
                            .map(|s| s.to_string())
                            .or_else(|| u.error.clone())
                            .unwrap_or_else(|| "-".into());
                        format!("{} {}{} {status}", u.method, u.host, u.path)
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let result = if r.issues.is_empty() {
                r.result.clone()
            } else {
                format!("{} {}", r.result, r.issues.join(","))
            };
            // A read, get or completion shows its kind and target.
            let tool = match (&r.kind, &r.target) {
                (Some(kind), Some(target)) => format!("{kind} {target}"),
                (Some(kind), None) => kind.clone(),
                _ => r.tool.clone(),
            };
            [
                r.time.clone(),
                r.caller.clone(),
                r.client.clone().unwrap_or_else(|| "-".into()),
                tool,
                confirmation,
                upstream,
                result,
                r.duration_ms.to_string(),
            ]
            .map(|cell| crate::logging::escape_controls(&cell).into_owned())
        })
        .collect();
    crate::table::write(out, header, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::record::rfc3339;

    #[test]
    fn since_takes_a_time_or_a_duration() {
        let now = DateTime::parse_from_rfc3339("2026-11-25T08:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            rfc3339(parse_since("1h", now).unwrap()),
            "2026-11-25T07:00:00.000Z"
        );
        assert_eq!(
            rfc3339(parse_since("2026-11-25T06:30:00+01:00", now).unwrap()),
            "2026-11-25T05:30:00.000Z"
        );
        let error = parse_since("yesterday", now).unwrap_err().to_string();
        assert!(error.contains("RFC 3339"), "{error}");
    }
}
