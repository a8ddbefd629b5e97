//! Katana's wire shapes: only the fields the tools read, deserialized
//! leniently (unknown fields ignored, optional fields defaulted, numbers
//! accepted as JSON numbers or numeric strings), and the request bodies the
//! tools send.
//!
//! The endpoint numbers (E1–E9) are those of the Katana contract.

use serde::{Deserialize, Deserializer, Serialize};

/// A list response: `{"data": [...]}` (E1 and the other list endpoints).
#[derive(Debug, Clone, Deserialize)]
pub struct List<T> {
    /// The rows of this page.
    #[serde(default = "Vec::new")]
    pub data: Vec<T>,
}

/// One variant (E1 `GET /variants?extend=product_or_material`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Variant {
    /// The variant id.
    pub id: u64,
    /// Its SKU; Katana allows variants without one.
    #[serde(default)]
    pub sku: Option<String>,
    /// `product`, `material` or `service`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// Configuration values, e.g. Size = 8-inch.
    #[serde(default, deserialize_with = "null_as_default")]
    pub config_attributes: Vec<ConfigAttribute>,
    /// The product or material the variant belongs to (with `extend`).
    #[serde(default)]
    pub product_or_material: Option<Parent>,
}

/// One configuration value of a variant.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ConfigAttribute {
    /// The attribute, e.g. `Size`.
    #[serde(default)]
    pub config_name: Option<String>,
    /// The value, e.g. `8-inch`.
    #[serde(default)]
    pub config_value: Option<String>,
}

/// The product or material a variant belongs to.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Parent {
    /// Its name, e.g. `Chef's Knife`.
    #[serde(default)]
    pub name: Option<String>,
}

/// A purchase order (E3 `GET /purchase_orders/{id}`, and E2's answer).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PurchaseOrder {
    /// The id.
    pub id: u64,
    /// The order number, e.g. `PO-25-001`.
    #[serde(default)]
    pub order_no: Option<String>,
    /// `NOT_RECEIVED`, `PARTIALLY_RECEIVED` or `RECEIVED`.
    #[serde(default)]
    pub status: Option<String>,
    /// ISO 4217 currency code.
    #[serde(default)]
    pub currency: Option<String>,
    /// Its rows. A partial receipt splits a row in two.
    #[serde(default, deserialize_with = "null_as_default")]
    pub purchase_order_rows: Vec<PurchaseOrderRow>,
}

/// One row of a purchase order.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PurchaseOrderRow {
    /// The row id (`purchase_order_row_id` when receiving).
    pub id: u64,
    /// The variant ordered.
    pub variant_id: u64,
    /// The quantity; after a partial receipt, what is still open.
    #[serde(deserialize_with = "number")]
    pub quantity: f64,
    /// The price of one unit.
    #[serde(default, deserialize_with = "optional_number")]
    pub price_per_unit: Option<f64>,
    /// When the row was received; null while it is open.
    #[serde(default)]
    pub received_date: Option<String>,
}

/// A manufacturing order (E6, and the answers of E5 and E7).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ManufacturingOrder {
    /// The id.
    pub id: u64,
    /// The order number, e.g. `MO-25-001`.
    #[serde(default)]
    pub order_no: Option<String>,
    /// `NOT_STARTED`, `BLOCKED`, `IN_PROGRESS` or `DONE`.
    #[serde(default)]
    pub status: Option<String>,
    /// The variant it makes.
    #[serde(default)]
    pub variant_id: Option<u64>,
    /// How many it was planned to make.
    #[serde(default, deserialize_with = "optional_number")]
    pub planned_quantity: Option<f64>,
    /// How many it made, once done.
    #[serde(default, deserialize_with = "optional_number")]
    pub actual_quantity: Option<f64>,
    /// Where it is made.
    #[serde(default)]
    pub location_id: Option<u64>,
}

/// A sales order (E8 `GET /sales_orders/{id}`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct SalesOrder {
    /// The id.
    pub id: u64,
    /// The order number, e.g. `SO-25-001`.
    #[serde(default)]
    pub order_no: Option<String>,
    /// `NOT_SHIPPED`, `PARTIALLY_PACKED`, `PACKED`, `PARTIALLY_DELIVERED` or `DELIVERED`.
    #[serde(default)]
    pub status: Option<String>,
    /// Where it ships from.
    #[serde(default)]
    pub location_id: Option<u64>,
    /// Its rows.
    #[serde(default, deserialize_with = "null_as_default")]
    pub sales_order_rows: Vec<SalesOrderRow>,
}

/// One row of a sales order.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct SalesOrderRow {
    /// The row id.
    pub id: u64,
    /// The variant sold.
    pub variant_id: u64,
    /// How many.
    #[serde(deserialize_with = "number")]
    pub quantity: f64,
}

/// A fulfillment (E9's answer).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Fulfillment {
    /// The id.
    #[serde(default)]
    pub id: Option<u64>,
    /// `PACKED` or `DELIVERED`.
    #[serde(default)]
    pub status: Option<String>,
}

/// The body of E2 `POST /purchase_orders`.
#[derive(Debug, Clone, Serialize)]
pub struct NewPurchaseOrder<'a> {
    /// The order number.
    pub order_no: &'a str,
    /// Always `regular` (not an outsourced order).
    pub entity_type: &'static str,
    /// The supplier.
    pub supplier_id: u64,
    /// Where the goods arrive.
    pub location_id: u64,
    /// ISO 4217 code; Katana uses the supplier's when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub currency: Option<&'a str>,
    /// When the order was made (now).
    pub order_created_date: String,
    /// Free-text notes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_info: Option<&'a str>,
    /// The rows.
    pub purchase_order_rows: Vec<NewPurchaseOrderRow<'a>>,
}

/// One row of [`NewPurchaseOrder`].
#[derive(Debug, Clone, Serialize)]
pub struct NewPurchaseOrderRow<'a> {
    /// The variant.
    pub variant_id: u64,
    /// How many.
    pub quantity: f64,
    /// The price of one unit.
    pub price_per_unit: f64,
    /// The tax rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tax_rate_id: Option<u64>,
    /// The unit the supplier sells in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purchase_uom: Option<&'a str>,
    /// Stock units per purchase unit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purchase_uom_conversion_rate: Option<f64>,
    /// Expected arrival.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrival_date: Option<&'a str>,
}

/// One entry of E4 `POST /purchase_order_receive`.
#[derive(Debug, Clone, Serialize)]
pub struct Receipt<'a> {
    /// The row received.
    pub purchase_order_row_id: u64,
    /// How many arrived.
    pub quantity: f64,
    /// When (now).
    pub received_date: &'a str,
}

/// The body of E5 `POST /manufacturing_orders`.
#[derive(Debug, Clone, Serialize)]
pub struct NewManufacturingOrder<'a> {
    /// The order number.
    pub order_no: &'a str,
    /// What to make.
    pub variant_id: u64,
    /// Where.
    pub location_id: u64,
    /// How many.
    pub planned_quantity: f64,
    /// When it was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_created_date: Option<&'a str>,
    /// When it must be done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub production_deadline_date: Option<&'a str>,
    /// Notes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_info: Option<&'a str>,
}

/// The body of E9 `POST /sales_order_fulfillments`.
#[derive(Debug, Clone, Serialize)]
pub struct NewFulfillment {
    /// The sales order.
    pub sales_order_id: u64,
    /// Always `DELIVERED`.
    pub status: &'static str,
    /// Every row at full quantity.
    pub sales_order_fulfillment_rows: Vec<FulfillmentRow>,
}

/// One row of [`NewFulfillment`].
#[derive(Debug, Clone, Serialize)]
pub struct FulfillmentRow {
    /// The sales order row.
    pub sales_order_row_id: u64,
    /// How many.
    pub quantity: f64,
}

/// The `X-Pagination` header: `{total_records, total_pages, offset, page,
/// first_page, last_page}`. The sandbox sends the values as strings, the
/// published spec as numbers and booleans; both are read.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Pagination {
    /// Pages in all.
    #[serde(default, deserialize_with = "optional_number")]
    pub total_pages: Option<f64>,
    /// This page.
    #[serde(default, deserialize_with = "optional_number")]
    pub page: Option<f64>,
    /// Whether this is the last page.
    #[serde(default, deserialize_with = "optional_flag")]
    pub last_page: Option<bool>,
}

impl Pagination {
    /// Parses the header's value; `None` when it is not the expected JSON.
    pub fn parse(header: &str) -> Option<Pagination> {
        serde_json::from_str(header).ok()
    }

    /// Whether the header says no page follows this one.
    pub fn is_last(&self) -> Option<bool> {
        if let Some(last) = self.last_page {
            return Some(last);
        }
        Some(self.page? >= self.total_pages?)
    }
}

/// A number sent as a JSON number or a numeric string.
#[derive(Deserialize)]
#[serde(untagged)]
enum Numeric {
    Number(f64),
    Text(String),
}

impl Numeric {
    fn value(self) -> Option<f64> {
        match self {
            Numeric::Number(n) => Some(n),
            Numeric::Text(t) => t.trim().parse().ok(),
        }
    }
}

fn number<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Numeric::deserialize(d)?
        .value()
        .ok_or_else(|| serde::de::Error::custom("expected a number"))
}

fn optional_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(Option::<Numeric>::deserialize(d)?.and_then(Numeric::value))
}

fn optional_flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Flag {
        Bool(bool),
        Text(String),
    }
    Ok(match Option::<Flag>::deserialize(d)? {
        Some(Flag::Bool(b)) => Some(b),
        Some(Flag::Text(t)) => t.trim().parse().ok(),
        None => None,
    })
}

fn null_as_default<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(
    d: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contract_examples_parse() {
        let list: List<Variant> = serde_json::from_str(
            r#"{"data":[{"id":5001,"sku":"KNF-8IN-BLK","type":"product","config_attributes":[{"config_name":"Size","config_value":"8-inch"}],"product_or_material":{"name":"Chef's Knife"}}]}"#,
        )
        .unwrap();
        assert_eq!(list.data[0].kind.as_deref(), Some("product"));
        assert_eq!(
            list.data[0].config_attributes[0].config_value.as_deref(),
            Some("8-inch")
        );
        let po: PurchaseOrder = serde_json::from_str(
            r#"{"id":7001,"order_no":"PO-25-001","status":"NOT_RECEIVED","purchase_order_rows":[{"id":7101,"variant_id":5101,"quantity":"200","price_per_unit":2.5,"received_date":null}]}"#,
        )
        .unwrap();
        assert_eq!(po.purchase_order_rows[0].quantity, 200.0);
        assert_eq!(po.purchase_order_rows[0].price_per_unit, Some(2.5));
    }

    #[test]
    fn pagination_reads_strings_and_numbers() {
        let strings = Pagination::parse(
            r#"{"total_records":"120","total_pages":"3","offset":"50","page":"2","first_page":"false","last_page":"false"}"#,
        )
        .unwrap();
        assert_eq!(strings.is_last(), Some(false));
        let numbers = Pagination::parse(r#"{"total_pages":3,"page":3}"#).unwrap();
        assert_eq!(numbers.is_last(), Some(true));
        assert_eq!(Pagination::parse("{}").unwrap().is_last(), None);
        assert_eq!(Pagination::parse("not json"), None);
    }
}
