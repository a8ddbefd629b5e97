//! Content blocks a tool returns beside its JSON result
//! (`toolhost:plugin@0.3.0`): text, images, audio, embedded documents and
//! links to resources.
//!
//! A tool says which blocks go with a result in [`Tool::content`](crate::Tool::content);
//! the JSON result stays its `structuredContent`. The host checks every
//! block before the client sees it: an image needs an `image/*` MIME type,
//! audio an `audio/*` one, and the result and its blocks together must fit
//! the plugin's `limits.output_bytes` (bytes counted before base64). A
//! block that breaks a rule fails the call with an error naming it.

use crate::bindings::toolhost::plugin0_2_0::content as wit2;
use crate::bindings::toolhost::plugin0_3_0::content as wit;
use crate::offer::Contents;

/// One content block.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Text.
    Text(String),
    /// An image: its MIME type (`image/png`, …) and bytes.
    Image {
        /// `image/*`.
        mime_type: String,
        /// The raw bytes.
        data: Vec<u8>,
    },
    /// Audio: its MIME type (`audio/wav`, …) and bytes.
    Audio {
        /// `audio/*`.
        mime_type: String,
        /// The raw bytes.
        data: Vec<u8>,
    },
    /// A document, embedded: the client and the model get its contents
    /// without reading it themselves.
    Resource {
        /// The document's URI.
        uri: String,
        /// Its MIME type, e.g. `text/markdown`.
        mime_type: String,
        /// Its contents.
        contents: Contents,
    },
    /// A link to a resource the client may read itself.
    ResourceLink {
        /// Its URI.
        uri: String,
        /// A short programmatic name.
        name: String,
        /// A human-readable title.
        title: Option<String>,
        /// Its MIME type, when known.
        mime_type: Option<String>,
    },
}

impl Block {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Block {
        Block::Text(text.into())
    }

    /// An image block.
    pub fn image(mime_type: impl Into<String>, data: impl Into<Vec<u8>>) -> Block {
        Block::Image {
            mime_type: mime_type.into(),
            data: data.into(),
        }
    }

    /// An audio block.
    pub fn audio(mime_type: impl Into<String>, data: impl Into<Vec<u8>>) -> Block {
        Block::Audio {
            mime_type: mime_type.into(),
            data: data.into(),
        }
    }

    /// An embedded document.
    pub fn document(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        contents: impl Into<Contents>,
    ) -> Block {
        Block::Resource {
            uri: uri.into(),
            mime_type: mime_type.into(),
            contents: contents.into(),
        }
    }

    /// A link to the resource at `uri`, called `name`.
    pub fn link(uri: impl Into<String>, name: impl Into<String>) -> Block {
        Block::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            mime_type: None,
        }
    }

    /// The block as the WIT carries it.
    pub(crate) fn into_wit(self) -> wit::Block {
        match self {
            Block::Text(text) => wit::Block::Text(text),
            Block::Image { mime_type, data } => wit::Block::Image(wit::Media { mime_type, data }),
            Block::Audio { mime_type, data } => wit::Block::Audio(wit::Media { mime_type, data }),
            Block::Resource {
                uri,
                mime_type,
                contents,
            } => wit::Block::Resource(wit2::ResourceContents {
                uri,
                mime_type: Some(mime_type),
                body: match contents {
                    Contents::Text(text) => wit2::Body::Text(text),
                    Contents::Bytes(bytes) => wit2::Body::Blob(bytes),
                },
            }),
            Block::ResourceLink {
                uri,
                name,
                title,
                mime_type,
            } => wit::Block::ResourceLink(wit::ResourceLink {
                uri,
                name,
                title,
                description: None,
                mime_type,
                size: None,
            }),
        }
    }
}
