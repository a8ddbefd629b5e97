//! Reading client input the way Katana does: query strings, pages and JSON
//! bodies checked against the request schema.
//!
//! Query strings: an array parameter takes repeated keys (`ids=1&ids=2`),
//! commas (`ids=1,2`) or both; empty values are dropped; a scalar parameter
//! (`page`, `limit`) takes its last value. Unknown query parameters are
//! ignored.
//!
//! Pages: `page` defaults to 1, `limit` to [`DEFAULT_LIMIT`]; a `limit` above
//! [`MAX_LIMIT`] is clamped to it, a non-integer or a value below 1 is a 422.
//! Lists answer `{"data": [...]}` with the `X-Pagination` header.
//!
//! Bodies: an empty body reads as `{}`; text that is not JSON is a 400. Each
//! object is opened with the fields its schema allows and requires ([`Obj`]):
//! an unknown field, a missing one, a wrong JSON type (null included, unless
//! the field is nullable) or a bad enum value is a detail of the 422, in the
//! wording of the JSON-schema validator Katana uses (`should have required
//! property 'order_no'`). Integers accept whole numbers such as `5.0`, as JSON
//! Schema does; ids are at most 2147483647.

use axum::{
    Json,
    http::{HeaderValue, header::HeaderName},
    response::{IntoResponse, Response},
};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::{
    clock,
    error::{ApiError, Details},
    model::{ListBody, Pagination},
};

/// Records per page when `limit` is not given.
pub const DEFAULT_LIMIT: u64 = 50;

/// The largest page; a larger `limit` is clamped to it.
pub const MAX_LIMIT: u64 = 250;

/// The response header carrying [`Pagination`] as JSON.
pub const PAGINATION_HEADER: &str = "x-pagination";

/// The largest id the schema accepts (a signed 32-bit integer).
const MAX_ID: i64 = 2_147_483_647;

/// A parsed query string.
#[derive(Debug, Default)]
pub(crate) struct QueryParams {
    /// `(key, value)` pairs in order, values percent-decoded.
    pairs: Vec<(String, String)>,
}

impl QueryParams {
    /// Parses a raw query string (without `?`).
    pub fn parse(raw: Option<&str>) -> Self {
        Self {
            pairs: form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
                .map(|(key, value)| (key.into_owned(), value.into_owned()))
                .collect(),
        }
    }

    /// Every value of an array parameter: repeated keys and comma-separated
    /// values, trimmed, empty ones dropped.
    pub fn strings(&self, name: &str) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(key, _)| key == name)
            .flat_map(|(_, value)| value.split(','))
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// An array of integer ids; a value that is not one is a detail.
    pub fn ids(&self, name: &str, details: &mut Details) -> Vec<i64> {
        let mut ids = Vec::new();
        for (index, value) in self.strings(name).iter().enumerate() {
            match value.parse::<i64>() {
                Ok(id) => ids.push(id),
                Err(_) => details.add(&format!(".{name}[{index}]"), "type", "should be integer"),
            }
        }
        ids
    }

    /// The last value of a scalar parameter, if any and not empty.
    pub fn single(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.trim())
            .filter(|value| !value.is_empty())
    }

    /// `page` and `limit`, validated and clamped.
    pub fn page(&self, details: &mut Details) -> Page {
        let page = self.positive("page", details).unwrap_or(1);
        let limit = self
            .positive("limit", details)
            .unwrap_or(DEFAULT_LIMIT)
            .min(MAX_LIMIT);
        Page { page, limit }
    }

    /// A scalar integer that must be at least 1.
    fn positive(&self, name: &str, details: &mut Details) -> Option<u64> {
        let text = self.single(name)?;
        let path = format!(".{name}");
        match text.parse::<i64>() {
            Err(_) => {
                details.add(&path, "type", "should be integer");
                None
            }
            Ok(value) if value < 1 => {
                details.add_info(
                    &path,
                    "minimum",
                    "should be >= 1",
                    json!({"comparison": ">=", "limit": 1}),
                );
                None
            }
            Ok(value) => Some(value.unsigned_abs()),
        }
    }
}

/// One page of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Page {
    /// 1-based page number.
    pub page: u64,
    /// Records per page, 1..=[`MAX_LIMIT`].
    pub limit: u64,
}

impl Page {
    /// Cuts this page out of `items` (already filtered and sorted) and
    /// describes it.
    pub fn cut<T>(self, items: Vec<T>) -> (Vec<T>, Pagination) {
        let total = items.len() as u64;
        let total_pages = total.div_ceil(self.limit).max(1);
        let offset = (self.page - 1).saturating_mul(self.limit);
        let data = items
            .into_iter()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take(usize::try_from(self.limit).unwrap_or(usize::MAX))
            .collect();
        let pagination = Pagination {
            total_records: total.to_string(),
            total_pages: total_pages.to_string(),
            offset: offset.to_string(),
            page: self.page.to_string(),
            first_page: (self.page == 1).to_string(),
            last_page: (self.page >= total_pages).to_string(),
        };
        (data, pagination)
    }

    /// The list response: `{"data": [...]}` plus the `X-Pagination` header.
    pub fn respond<T: Serialize>(self, items: Vec<T>) -> Response {
        let (data, pagination) = self.cut(items);
        let mut response = Json(ListBody { data }).into_response();
        let header = serde_json::to_string(&pagination).expect("pagination serializes");
        if let Ok(value) = HeaderValue::from_str(&header) {
            response
                .headers_mut()
                .insert(HeaderName::from_static(PAGINATION_HEADER), value);
        }
        response
    }
}

/// Parses a request body as JSON; an empty body is `{}`.
pub(crate) fn parse_json(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_slice(bytes).map_err(|err| {
        tracing::debug!(%err, "rejected: body is not JSON");
        ApiError::BadRequest
    })
}

/// Records a wrong-type detail.
fn wrong_type(path: &str, expected: &str, details: &mut Details) {
    details.add_info(
        path,
        "type",
        format!("should be {expected}"),
        json!({"type": expected}),
    );
}

/// Records a `quantity > 0` violation unless `value` is positive.
pub(crate) fn require_positive(value: f64, path: &str, details: &mut Details) -> bool {
    if value > 0.0 {
        return true;
    }
    details.add_info(
        path,
        "exclusiveMinimum",
        "should be > 0",
        json!({"comparison": ">", "limit": 0}),
    );
    false
}

/// Records a `value >= 0` violation unless `value` is non-negative.
pub(crate) fn require_non_negative(value: f64, path: &str, details: &mut Details) -> bool {
    if value >= 0.0 {
        return true;
    }
    details.add_info(
        path,
        "minimum",
        "should be >= 0",
        json!({"comparison": ">=", "limit": 0}),
    );
    false
}

/// One JSON object of a request body, opened against its schema.
#[derive(Debug)]
pub(crate) struct Obj<'a> {
    /// The object.
    map: &'a Map<String, Value>,
    /// Its path: `""` for the body, `.purchase_order_rows[0]`, `[2]`.
    path: String,
}

impl<'a> Obj<'a> {
    /// Opens `value` as an object at `path`: records a detail for a
    /// non-object, for every field not in `allowed` and for every field of
    /// `required` that is missing. `None` only for a non-object.
    pub fn open(
        value: &'a Value,
        path: &str,
        allowed: &[&str],
        required: &[&str],
        details: &mut Details,
    ) -> Option<Self> {
        let Value::Object(map) = value else {
            let at = if path.is_empty() { "" } else { path };
            wrong_type(at, "object", details);
            return None;
        };
        let obj = Self {
            map,
            path: path.to_owned(),
        };
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                details.add_info(
                    &obj.path(key),
                    "additionalProperties",
                    "should NOT have additional properties",
                    json!({"additionalProperty": key}),
                );
            }
        }
        for name in required {
            if !map.contains_key(*name) {
                details.add_info(
                    &obj.path(name),
                    "required",
                    format!("should have required property '{name}'"),
                    json!({"missingProperty": name}),
                );
            }
        }
        Some(obj)
    }

    /// The path of field `name`: `.order_no`, `[0].quantity`.
    pub fn path(&self, name: &str) -> String {
        format!("{}.{name}", self.path)
    }

    /// An integer id field (at most 2147483647).
    pub fn id(&self, name: &str, details: &mut Details) -> Option<i64> {
        let value = self.map.get(name)?;
        let path = self.path(name);
        let integer = value.as_i64().or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        });
        let Some(integer) = integer else {
            wrong_type(&path, "integer", details);
            return None;
        };
        if integer > MAX_ID {
            details.add_info(
                &path,
                "maximum",
                format!("should be <= {MAX_ID}"),
                json!({"comparison": "<=", "limit": MAX_ID}),
            );
            return None;
        }
        Some(integer)
    }

    /// A number field.
    pub fn number(&self, name: &str, details: &mut Details) -> Option<f64> {
        let value = self.map.get(name)?;
        let number = value.as_f64();
        if number.is_none() {
            wrong_type(&self.path(name), "number", details);
        }
        number
    }

    /// A string field of at most `max_chars` characters, if limited.
    pub fn string(
        &self,
        name: &str,
        max_chars: Option<usize>,
        details: &mut Details,
    ) -> Option<String> {
        let value = self.map.get(name)?;
        let Value::String(text) = value else {
            wrong_type(&self.path(name), "string", details);
            return None;
        };
        if let Some(max) = max_chars
            && text.chars().count() > max
        {
            details.add_info(
                &self.path(name),
                "maxLength",
                format!("should NOT be longer than {max} characters"),
                json!({"limit": max}),
            );
            return None;
        }
        Some(text.clone())
    }

    /// A nullable string field: null reads as absent.
    pub fn nullable_string(
        &self,
        name: &str,
        max_chars: Option<usize>,
        details: &mut Details,
    ) -> Option<String> {
        if self.map.get(name).is_some_and(Value::is_null) {
            return None;
        }
        self.string(name, max_chars, details)
    }

    /// A date or datetime string field (see [`crate::clock::parse`]).
    pub fn date(&self, name: &str, details: &mut Details) -> Option<DateTime<Utc>> {
        let text = self.string(name, None, details)?;
        let parsed = clock::parse(&text);
        if parsed.is_none() {
            details.add_info(
                &self.path(name),
                "format",
                "should match format \"date-time\"",
                json!({"format": "date-time"}),
            );
        }
        parsed
    }

    /// A string field that must be one of `allowed`.
    pub fn enumeration(
        &self,
        name: &str,
        allowed: &[&str],
        details: &mut Details,
    ) -> Option<&'a str> {
        let value = self.map.get(name)?;
        match value.as_str() {
            Some(text) if allowed.contains(&text) => Some(text),
            _ => {
                details.add_info(
                    &self.path(name),
                    "enum",
                    "should be equal to one of the allowed values",
                    json!({"allowedValues": allowed}),
                );
                None
            }
        }
    }

    /// An array field with at least `min_items` items.
    pub fn array(
        &self,
        name: &str,
        min_items: usize,
        details: &mut Details,
    ) -> Option<&'a [Value]> {
        let value = self.map.get(name)?;
        let Value::Array(items) = value else {
            wrong_type(&self.path(name), "array", details);
            return None;
        };
        if items.len() < min_items {
            details.add_info(
                &self.path(name),
                "minItems",
                format!("should NOT have fewer than {min_items} items"),
                json!({"limit": min_items}),
            );
            return None;
        }
        Some(items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_take_repeated_keys_and_commas() {
        let params = QueryParams::parse(Some("ids=1&ids=2,3&sku=A%2CB&sku=&page=2&page=3"));
        let mut details = Details::default();
        assert_eq!(params.ids("ids", &mut details), [1, 2, 3]);
        assert_eq!(params.strings("sku"), ["A", "B"]);
        assert_eq!(params.single("page"), Some("3"));
        assert!(details.is_empty());
        QueryParams::parse(Some("ids=1,x")).ids("ids", &mut details);
        assert!(!details.is_empty());
    }

    #[test]
    fn pages_default_clamp_and_reject() {
        let mut details = Details::default();
        let page = QueryParams::parse(None).page(&mut details);
        assert_eq!(page, Page { page: 1, limit: 50 });
        let page = QueryParams::parse(Some("limit=1000&page=2")).page(&mut details);
        assert_eq!(
            page,
            Page {
                page: 2,
                limit: 250
            }
        );
        assert!(details.is_empty());
        QueryParams::parse(Some("limit=0&page=x")).page(&mut details);
        assert!(details.finish().is_err());
    }

    #[test]
    fn cutting_describes_the_page_in_strings() {
        let (data, pagination) = Page { page: 3, limit: 50 }.cut((0..120).collect::<Vec<_>>());
        assert_eq!(data.len(), 20);
        assert_eq!(
            (
                pagination.total_records.as_str(),
                pagination.total_pages.as_str(),
                pagination.offset.as_str(),
                pagination.first_page.as_str(),
                pagination.last_page.as_str()
            ),
            ("120", "3", "100", "false", "true")
        );
        let (data, pagination) = Page { page: 9, limit: 50 }.cut((0..120).collect::<Vec<_>>());
        assert!(data.is_empty());
        assert_eq!(pagination.page, "9");
    }

    #[test]
    fn objects_report_unknown_missing_and_mistyped_fields() {
        let body = json!({"a": "x", "b": null, "z": 1});
        let mut details = Details::default();
        let obj = Obj::open(&body, "", &["a", "b", "c"], &["c"], &mut details).unwrap();
        assert_eq!(obj.string("b", None, &mut details), None);
        assert_eq!(obj.id("a", &mut details), None);
        let Err(ApiError::Validation { details, .. }) = details.finish() else {
            panic!("a 422");
        };
        let found: Vec<(&str, &str)> = details
            .iter()
            .map(|d| (d.path.as_str(), d.code.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (".z", "additionalProperties"),
                (".c", "required"),
                (".b", "type"),
                (".a", "type")
            ]
        );
    }

    #[test]
    fn integers_accept_whole_floats_and_cap_ids() {
        let body = json!({"a": 5.0, "b": 5.5, "c": 3_000_000_000_i64});
        let mut details = Details::default();
        let obj = Obj::open(&body, "[0]", &["a", "b", "c"], &[], &mut details).unwrap();
        assert_eq!(obj.id("a", &mut details), Some(5));
        assert_eq!(obj.id("b", &mut details), None);
        assert_eq!(obj.id("c", &mut details), None);
        assert_eq!(obj.path("a"), "[0].a");
    }
}
