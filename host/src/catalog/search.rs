//! Finding tools by what they do: BM25 (the `bm25` crate's scorer) over
//! each tool's served name, title, description and parameter names and
//! descriptions, with English stemming (`rust-stemmers`), so "receiving
//! deliveries" finds `receive_purchase_order`; a query's everyday verbs
//! also count as the action words tool names use (`ACTION_SYNONYMS`).
//!
//! Deterministic: the same tools and the same query give the same ranking,
//! ties broken by the order the tools were given in (the surface's order).
//! An index holds only what it was built from: it is built from what one
//! caller may see, so nothing hidden from that caller can be found, nor
//! change the scores of what can (its words count in no statistic).

use bm25::{Embedder, EmbedderBuilder, Scorer, Tokenizer};
use rust_stemmers::{Algorithm, Stemmer};

use super::Shown;

/// How many times a tool's name words count, against once for its other
/// text: a query naming the tool's verb and object should find it first.
const NAME_WEIGHT: usize = 2;

/// Words too common in tool text to tell tools apart.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "has", "have",
    "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "one", "or", "so",
    "that", "the", "their", "them", "then", "there", "these", "this", "to", "use", "want", "was",
    "what", "when", "which", "who", "will", "with", "you", "your",
];

/// Everyday verbs for the actions tool names are made of (a name's verb
/// is its first word: `create_`, `get_`, `update_`, …): a query's verb
/// also counts as the action it asks for, so "hand the ticket over" finds
/// `assign_ticket`. Query side only; the tools' own text is indexed as
/// written. Each entry: the everyday verb, the action's word.
const ACTION_SYNONYMS: &[(&str, &str)] = &[
    ("add", "create"),
    ("new", "create"),
    ("make", "create"),
    ("open", "create"),
    ("file", "create"),
    ("submit", "create"),
    ("register", "create"),
    ("book", "create"),
    ("schedule", "create"),
    ("launch", "create"),
    ("publish", "create"),
    ("raise", "create"),
    ("change", "update"),
    ("edit", "update"),
    ("modify", "update"),
    ("fix", "update"),
    ("correct", "update"),
    ("set", "update"),
    ("rename", "update"),
    ("move", "update"),
    ("reset", "update"),
    ("remove", "delete"),
    ("revoke", "delete"),
    ("erase", "delete"),
    ("show", "list"),
    ("browse", "list"),
    ("read", "get"),
    ("view", "get"),
    ("fetch", "get"),
    ("find", "search"),
    ("look", "search"),
    ("download", "export"),
    ("hand", "assign"),
    ("reassign", "assign"),
    ("transfer", "assign"),
    ("give", "assign"),
    ("close", "archive"),
    ("retire", "archive"),
    ("note", "comment"),
    ("remark", "comment"),
];

/// `query`'s words ([`Words`]), each everyday action verb followed by the
/// action's own word ([`ACTION_SYNONYMS`]).
fn query_text(query: &str) -> String {
    let mut text = String::with_capacity(query.len() * 2);
    for word in query.split(|c: char| !c.is_alphanumeric()) {
        text.push_str(word);
        text.push(' ');
        let lower = word.to_lowercase();
        if let Some((_, action)) = ACTION_SYNONYMS.iter().find(|(verb, _)| *verb == lower) {
            text.push_str(action);
            text.push(' ');
        }
    }
    text
}

/// Splits text into stemmed lower-case words: on anything not a letter or
/// a digit (so `update_order_status` is three words) and at a lower-upper
/// case change (`getOrder`), without stopwords.
pub struct Words {
    stemmer: Stemmer,
}

impl Default for Words {
    fn default() -> Self {
        Words {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }
}

impl Tokenizer for Words {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut previous_lower = false;
        let mut flush = |word: &mut String| {
            if !word.is_empty() {
                let lower = word.to_lowercase();
                if !STOPWORDS.contains(&lower.as_str()) {
                    words.push(self.stemmer.stem(&lower).into_owned());
                }
                word.clear();
            }
        };
        for c in input_text.chars() {
            if !c.is_alphanumeric() {
                flush(&mut word);
                previous_lower = false;
                continue;
            }
            if c.is_uppercase() && previous_lower {
                flush(&mut word);
            }
            previous_lower = c.is_lowercase();
            word.push(c);
        }
        flush(&mut word);
        words
    }
}

/// A BM25 index of one surface's tools.
pub struct Index {
    embedder: Embedder<u32, Words>,
    scorer: Scorer<usize>,
    /// The tools' served names, by document id.
    names: Vec<String>,
}

/// One tool found, best first.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The served name.
    pub name: String,
    /// Its BM25 score.
    pub score: f32,
}

impl Index {
    /// The index of `tools`.
    pub fn build(tools: &[Shown]) -> Index {
        let documents: Vec<String> = tools.iter().map(document).collect();
        let corpus: Vec<&str> = documents.iter().map(String::as_str).collect();
        let embedder = EmbedderBuilder::<u32, Words>::with_tokenizer_and_fit_to_corpus(
            Words::default(),
            &corpus,
        )
        .build();
        let mut scorer = Scorer::new();
        for (id, text) in documents.iter().enumerate() {
            scorer.upsert(&id, embedder.embed(text));
        }
        Index {
            embedder,
            scorer,
            names: tools.iter().map(|t| t.name.clone()).collect(),
        }
    }

    /// The number of tools indexed.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The `limit` best tools for `query` (only those sharing a word with
    /// it), best first; equal scores in the surface's order.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let mut found = self
            .scorer
            .matches(&self.embedder.embed(&query_text(query)));
        found.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        found
            .into_iter()
            .take(limit)
            .map(|d| Hit {
                name: self.names[d.id].clone(),
                score: d.score,
            })
            .collect()
    }
}

/// The text a tool is found by: its name (weighted), title, description,
/// and each parameter's name and description.
fn document(tool: &Shown) -> String {
    let mut text = String::new();
    for _ in 0..NAME_WEIGHT {
        text.push_str(&tool.name);
        text.push(' ');
    }
    text.push_str(tool.title());
    text.push(' ');
    text.push_str(tool.description());
    if let Some(serde_json::Value::Object(properties)) =
        tool.tool.spec.input_schema.get("properties")
    {
        for (name, property) in properties {
            text.push(' ');
            text.push_str(name);
            if let Some(description) = property.get("description").and_then(|d| d.as_str()) {
                text.push(' ');
                text.push_str(description);
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_querys_everyday_verbs_also_count_as_the_action_words() {
        assert_eq!(query_text("Hand it over"), "Hand assign it over ");
    }

    #[test]
    fn words_split_names_drop_stopwords_and_stem() {
        let words = Words::default();
        assert_eq!(
            words.tokenize("update_order_status getOrder: Receiving the deliveries"),
            [
                "updat", "order", "status", "get", "order", "receiv", "deliveri"
            ]
        );
    }
}
