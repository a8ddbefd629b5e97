//! The item catalog as a resource template (`toolhost:plugin@0.2.0`):
//! `katana://items/{sku}` reads one variant by SKU (E1
//! `GET /variants?sku=…&extend=product_or_material`), and completion on
//! `sku` suggests the SKUs starting with what was typed (E1, every page),
//! so a client can browse the catalog without a tool call.

use serde::{Deserialize, Serialize};
use toolhost_sdk::{Contents, ResourceAnnotations, ResourceTemplate, ToolError};

use crate::api::Variant;
use crate::client::Client;
use crate::tools::search_items::display_name;

/// The most SKUs one completion returns (MCP's cap).
const MAX_SUGGESTIONS: usize = 100;

/// The variables of `katana://items/{sku}`.
#[derive(Debug, Deserialize)]
pub struct ItemVariables {
    /// The SKU, percent-decoded by the host (`katana://items/A%2FB` is `A/B`).
    pub sku: String,
}

/// What reading an item returns.
#[derive(Debug, Serialize)]
pub struct ItemResource {
    /// The variant id: `variant_id` in create_purchase_order and create_manufacturing_order.
    pub id: u64,
    /// The SKU.
    pub sku: Option<String>,
    /// Product or material name and its configuration.
    pub name: String,
    /// `product`, `material` or `service`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Configuration values, e.g. `Size: 8-inch`.
    pub config: Vec<String>,
}

impl ItemResource {
    fn of(variant: &Variant) -> ItemResource {
        ItemResource {
            id: variant.id,
            sku: variant.sku.clone(),
            name: display_name(variant),
            kind: variant.kind.clone(),
            config: variant
                .config_attributes
                .iter()
                .filter_map(|a| match (&a.config_name, &a.config_value) {
                    (Some(n), Some(v)) => Some(format!("{n}: {v}")),
                    _ => None,
                })
                .collect(),
        }
    }
}

/// `katana://items/{sku}`.
pub struct ItemCatalog;

impl ResourceTemplate for ItemCatalog {
    type Variables = ItemVariables;
    const URI_TEMPLATE: &'static str = "katana://items/{sku}";
    const NAME: &'static str = "item";
    const TITLE: &'static str = "Katana Item by SKU";
    const DESCRIPTION: &'static str = "One product, material or service of the Katana catalog \
        by SKU: its variant id (for purchase and manufacturing orders), name, type and \
        configuration. SKUs complete as you type.";
    const MIME_TYPE: &'static str = "application/json";
    const ANNOTATIONS: ResourceAnnotations = ResourceAnnotations::FOR_THE_MODEL;
    const COMPLETABLE: &'static [&'static str] = &["sku"];

    fn read(&self, _uri: &str, variables: ItemVariables) -> Result<Contents, ToolError> {
        let sku = variables.sku;
        let variants: Vec<Variant> = Client::from_config()?.all(
            "/variants",
            &[
                ("sku", sku.clone()),
                ("extend", "product_or_material".to_string()),
            ],
        )?;
        let variant = variants
            .iter()
            .find(|v| v.sku.as_deref() == Some(sku.as_str()))
            .ok_or_else(|| {
                ToolError::not_found(format!("Katana has no item with SKU {sku:?}"))
                    .with_hint("complete the sku, or use search_items to find it")
            })?;
        serde_json::to_string_pretty(&ItemResource::of(variant))
            .map(Contents::Text)
            .map_err(|e| ToolError::internal(format!("cannot render the item: {e}")))
    }

    fn complete(&self, _variable: &str, value: &str) -> Result<Vec<String>, ToolError> {
        let variants = Client::from_config()?.variants()?;
        Ok(skus_starting_with(&variants, value))
    }
}

/// The SKUs of `variants` that start with `prefix` (any case), sorted, at
/// most [`MAX_SUGGESTIONS`].
pub fn skus_starting_with(variants: &[Variant], prefix: &str) -> Vec<String> {
    let prefix = prefix.to_lowercase();
    let mut skus: Vec<String> = variants
        .iter()
        .filter_map(|v| v.sku.clone())
        .filter(|sku| sku.to_lowercase().starts_with(&prefix))
        .collect();
    skus.sort();
    skus.dedup();
    skus.truncate(MAX_SUGGESTIONS);
    skus
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_matches_the_prefix_in_any_case_sorted() {
        let variant = |sku: &str| Variant {
            sku: Some(sku.into()),
            ..Variant::default()
        };
        let variants = [variant("KNF-8IN"), variant("FLR-001"), variant("knf-6in")];
        assert_eq!(skus_starting_with(&variants, "kn"), ["KNF-8IN", "knf-6in"]);
        assert!(skus_starting_with(&variants, "x").is_empty());
    }
}
