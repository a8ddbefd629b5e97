//! Time as every sandbox keeps it.
//!
//! Seeded records count from one fixed instant, [`seed_base`], so the seed
//! data reads the same on every run and tests can name what they expect;
//! records made while a sandbox runs take the real clock, [`now`]. How a
//! time is written on the wire is the API's own business: each sandbox
//! formats and parses in its `clock` module.

use chrono::{DateTime, TimeZone, Utc};

/// The fixed instant every seeded time counts from: 2026-03-01 09:00:00 UTC.
pub fn seed_base() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0)
        .single()
        .expect("the seed base is a valid UTC time")
}

/// The current time, for records and events made while a sandbox runs.
pub fn now() -> DateTime<Utc> {
    Utc::now()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_base_is_fixed() {
        assert_eq!(seed_base().to_rfc3339(), "2026-03-01T09:00:00+00:00");
    }
}
