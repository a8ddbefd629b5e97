//! Dates and times the way Katana spells them.
//!
//! Every datetime goes out as UTC with milliseconds and a `Z`
//! (`2026-03-01T09:00:00.000Z`). Clients may send an RFC 3339 datetime with
//! any offset, a datetime without an offset (read as UTC) or a bare
//! `YYYY-MM-DD` (midnight UTC); anything else is a 422. Seeded times derive
//! from [`seed_base`]; new records use the real clock.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

/// The wire format of every datetime.
const DATETIME_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.3fZ";

/// The seed's fixed instant and the real clock, shared by every sandbox.
pub(crate) use sandbox_kit::clock::{now, seed_base};

/// `2026-03-01T09:00:00.000Z`.
pub(crate) fn format(at: DateTime<Utc>) -> String {
    at.format(DATETIME_FORMAT).to_string()
}

/// Parses a client-sent date or datetime (see the module docs).
pub(crate) fn parse(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Some(at.with_timezone(&Utc));
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M:%S",
    ] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(text, format) {
            return Some(naive.and_utc());
        }
    }
    let date = NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
    // Require the zero-padded shape chrono would also accept unpadded.
    (text.len() == 10).then(|| date.and_hms_opt(0, 0, 0).map(|naive| naive.and_utc()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_milliseconds_and_z() {
        assert_eq!(format(seed_base()), "2026-03-01T09:00:00.000Z");
    }

    #[test]
    fn parses_datetimes_and_dates() {
        let expect = |text: &str, wire: &str| {
            assert_eq!(parse(text).map(format).as_deref(), Some(wire), "{text}");
        };
        expect("2026-03-05T10:00:00Z", "2026-03-05T10:00:00.000Z");
        expect("2026-03-05T12:00:00+02:00", "2026-03-05T10:00:00.000Z");
        expect("2026-03-05T10:00:00.250Z", "2026-03-05T10:00:00.250Z");
        expect("2026-03-05T10:00:00", "2026-03-05T10:00:00.000Z");
        expect("2026-03-05", "2026-03-05T00:00:00.000Z");
        for bad in ["", "tomorrow", "2026-3-5", "2026-02-30", "05/03/2026"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
