//! `search_items`: find products, materials and services by SKU or name.
//!
//! Katana has no text search, so this reads every variant (E1 with
//! `extend=product_or_material`, all pages) and ranks them here
//! ([`score`]): the query's lowercase tokens, joined by one space into `q`;
//! SKU equal to `q` 100, SKU starting with `q` 80, SKU holding every token
//! 60, name starting with `q` 40, name holding every token 20, anything
//! else dropped; equal scores keep Katana's order.

use crate::api::Variant;
use crate::prelude::*;

/// Arguments of `search_items`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchItemsInput {
    /// Words to look for in SKUs and item names, any case; e.g. a SKU, part of one, or a name.
    #[schemars(example = &"KNF-8IN", length(min = 1, max = 200))]
    pub query: String,
    /// How many items to return at most, best first (default 20).
    #[serde(default = "default_limit")]
    #[schemars(example = 20, range(min = 1, max = 100))]
    pub limit: u32,
}

fn default_limit() -> u32 {
    20
}

/// What `search_items` returns.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SearchItemsOutput {
    /// The best matches, best first.
    pub items: Vec<FoundItem>,
    /// How many variants matched in all (may exceed the items returned).
    pub total_count: usize,
}

/// One matching variant.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FoundItem {
    /// The variant id: `variant_id` in create_purchase_order and create_manufacturing_order.
    pub id: u64,
    /// The SKU; null when the variant has none.
    pub sku: Option<String>,
    /// Product or material name and its configuration, e.g. `Chef's Knife / 8-inch / Black`.
    pub name: String,
    /// `product`, `material` or `service`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

/// Searches variants.
pub struct SearchItems;

impl Tool for SearchItems {
    type Input = SearchItemsInput;
    type Output = SearchItemsOutput;
    const NAME: &'static str = "search_items";
    const TITLE: &'static str = "Search Items";
    const DESCRIPTION: &'static str = "Search Katana products, materials and services by SKU \
        or name and return their variant ids, best match first. Use it to find the variant_id \
        that create_purchase_order and create_manufacturing_order need, or to check that a \
        SKU exists. An exact SKU ranks first, then SKUs starting with the query, SKUs \
        containing every word, then names.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn call(&self, input: SearchItemsInput) -> Result<SearchItemsOutput, ToolError> {
        if input.query.trim().is_empty() {
            return Err(ToolError::validation("query is blank")
                .with_hint("give a SKU or words from an item's name, e.g. \"KNF-8IN\""));
        }
        let variants = Client::from_config()?.variants()?;
        Ok(search(&variants, &input.query, input.limit as usize))
    }
}

/// Ranks `variants` for `query` and keeps the best `limit`.
pub fn search(variants: &[Variant], query: &str, limit: usize) -> SearchItemsOutput {
    let tokens: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let mut scored: Vec<(u32, FoundItem)> = variants
        .iter()
        .filter_map(|v| {
            let name = display_name(v);
            let score = score(&tokens, v.sku.as_deref().unwrap_or(""), &name)?;
            Some((
                score,
                FoundItem {
                    id: v.id,
                    sku: v.sku.clone(),
                    name,
                    kind: v.kind.clone(),
                },
            ))
        })
        .collect();
    // The sort is stable: equal scores keep Katana's order.
    scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
    let total_count = scored.len();
    SearchItemsOutput {
        items: scored
            .into_iter()
            .take(limit)
            .map(|(_, item)| item)
            .collect(),
        total_count,
    }
}

/// The score of one variant, or `None` when it does not match.
pub fn score(tokens: &[String], sku: &str, name: &str) -> Option<u32> {
    if tokens.is_empty() {
        return None;
    }
    let q = tokens.join(" ");
    let sku = sku.to_lowercase();
    let name = name.to_lowercase();
    let has_all = |text: &str| tokens.iter().all(|t| text.contains(t.as_str()));
    if !sku.is_empty() && sku == q {
        Some(100)
    } else if !sku.is_empty() && sku.starts_with(&q) {
        Some(80)
    } else if !sku.is_empty() && has_all(&sku) {
        Some(60)
    } else if name.starts_with(&q) {
        Some(40)
    } else if has_all(&name) {
        Some(20)
    } else {
        None
    }
}

/// The parent's name and the configuration values, joined by ` / `; the
/// SKU when there is no parent name; `variant {id}` when there is neither.
pub fn display_name(variant: &Variant) -> String {
    let parent = variant
        .product_or_material
        .as_ref()
        .and_then(|p| p.name.as_deref())
        .map(str::trim)
        .filter(|n| !n.is_empty());
    match parent {
        Some(parent) => {
            let mut name = parent.to_string();
            for value in variant
                .config_attributes
                .iter()
                .filter_map(|a| a.config_value.as_deref())
                .filter(|v| !v.trim().is_empty())
            {
                name.push_str(" / ");
                name.push_str(value.trim());
            }
            name
        }
        None => variant
            .sku
            .clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| format!("variant {}", variant.id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ConfigAttribute, Parent};

    fn variant(id: u64, sku: &str, parent: Option<&str>, config: &[&str]) -> Variant {
        Variant {
            id,
            sku: (!sku.is_empty()).then(|| sku.to_string()),
            kind: Some("product".into()),
            config_attributes: config
                .iter()
                .map(|v| ConfigAttribute {
                    config_name: Some("x".into()),
                    config_value: Some(v.to_string()),
                })
                .collect(),
            product_or_material: parent.map(|n| Parent {
                name: Some(n.to_string()),
            }),
        }
    }

    fn tokens(q: &str) -> Vec<String> {
        q.split_whitespace().map(str::to_lowercase).collect()
    }

    #[test]
    fn each_rule_scores_as_the_contract_says() {
        let t = tokens("knf-8in-blk");
        assert_eq!(score(&t, "KNF-8IN-BLK", "Chef's Knife"), Some(100));
        assert_eq!(score(&tokens("KNF-8IN"), "KNF-8IN-BLK", "x"), Some(80));
        assert_eq!(score(&tokens("blk 8in"), "KNF-8IN-BLK", "x"), Some(60));
        assert_eq!(
            score(
                &tokens("chef's knife"),
                "KNF-8IN-BLK",
                "Chef's Knife / 8-inch"
            ),
            Some(40)
        );
        assert_eq!(
            score(
                &tokens("knife 8-inch"),
                "KNF-8IN-BLK",
                "Chef's Knife / 8-inch"
            ),
            Some(20)
        );
        assert_eq!(score(&tokens("spoon"), "KNF-8IN-BLK", "Chef's Knife"), None);
        assert_eq!(score(&[], "KNF", "Knife"), None);
        // Tokens are joined by one space, however they were separated.
        assert_eq!(
            score(&tokens("  Chef's   KNIFE "), "", "Chef's Knife"),
            Some(40)
        );
    }

    #[test]
    fn names_join_the_parent_and_the_configuration() {
        assert_eq!(
            display_name(&variant(
                1,
                "KNF-8IN-BLK",
                Some("Chef's Knife"),
                &["8-inch", "Black"]
            )),
            "Chef's Knife / 8-inch / Black"
        );
        assert_eq!(
            display_name(&variant(2, "STL-BLANK-8", None, &[])),
            "STL-BLANK-8"
        );
        assert_eq!(display_name(&variant(3, "", None, &[])), "variant 3");
        assert_eq!(
            display_name(&variant(4, "S", Some("Sharpening"), &[])),
            "Sharpening"
        );
    }

    #[test]
    fn results_are_ranked_stably_and_counted_before_the_limit() {
        let variants = vec![
            variant(1, "WAL-SCALE", Some("Walnut Scale"), &[]),
            variant(
                2,
                "KNF-8IN-WAL",
                Some("Chef's Knife"),
                &["8-inch", "Walnut"],
            ),
            variant(3, "KNF-8IN-BLK", Some("Chef's Knife"), &["8-inch", "Black"]),
            variant(4, "XWAL", Some("Other"), &[]),
            variant(5, "KNF-8IN", Some("Knife blank"), &[]),
        ];
        let out = search(&variants, "wal", 10);
        let ids: Vec<u64> = out.items.iter().map(|i| i.id).collect();
        // 1 starts with "wal" (80); 2 and 4 contain it (60, Katana order); 3 has it nowhere.
        assert_eq!(ids, [1, 2, 4]);
        assert_eq!(out.total_count, 3);

        let out = search(&variants, "knf-8in", 1);
        assert_eq!(out.items[0].id, 5, "the exact SKU first");
        assert_eq!(out.total_count, 3);
        assert_eq!(out.items.len(), 1);
    }
}
