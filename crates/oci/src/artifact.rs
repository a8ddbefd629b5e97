//! The artifact format: a component as an OCI manifest, written and checked.
//!
//! `toolhost push` writes the layout of the CNCF TAG Runtime's Wasm OCI
//! artifact guidance (the one `wkg` and wassette read):
//! - an OCI image manifest (`application/vnd.oci.image.manifest.v1+json`);
//! - its config, `application/vnd.wasm.config.v0+json`: `created`,
//!   `architecture: "wasm"`, `os: "wasip2"`, `layerDigests`;
//! - exactly one layer, `application/wasm`: the component's bytes,
//!   annotated with `org.opencontainers.image.title` (the file name);
//! - manifest annotations `org.opencontainers.image.created` and, when the
//!   tag is a version, `org.opencontainers.image.version`.
//!
//! A pulled manifest is accepted only in that shape ([`check_manifest`]):
//! anything else (a container image, another artifact, several layers) is
//! not a component and is refused before a layer is fetched.

use std::collections::BTreeMap;

use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest};
use serde::Serialize;

use super::OciError;
use super::store::sha256_digest;

/// The config's media type.
pub const WASM_CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The layer's media type.
pub const WASM_LAYER_MEDIA_TYPE: &str = "application/wasm";

/// The config blob of the guidance.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WasmConfig {
    created: String,
    architecture: &'static str,
    os: &'static str,
    layer_digests: Vec<String>,
}

/// A component made ready to push: the blobs and the manifest's bytes.
#[derive(Debug)]
pub struct Artifact {
    /// The config blob.
    pub config: Vec<u8>,
    /// The config's descriptor.
    pub config_descriptor: OciDescriptor,
    /// The component's bytes.
    pub layer: Vec<u8>,
    /// The layer's descriptor.
    pub layer_descriptor: OciDescriptor,
    /// The manifest, serialized: its digest is the artifact's digest.
    pub manifest: Vec<u8>,
}

/// The first eight bytes of a binary component (magic, then the component
/// layer's version): a core module or anything else is not one.
const COMPONENT_PREAMBLE: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

/// Checks that a pulled layer's bytes are a component, as [`pack`] checks
/// a pushed file: a core module (or anything else) in a well-formed
/// manifest is refused.
pub fn check_component(bytes: &[u8], reference: &str) -> Result<(), OciError> {
    if bytes.starts_with(&COMPONENT_PREAMBLE) {
        return Ok(());
    }
    let found = if bytes.starts_with(b"\0asm\x01\0\0\0") {
        "a core WebAssembly module"
    } else if bytes.starts_with(b"\0asm") {
        "WebAssembly of an unsupported version or layer"
    } else {
        "not WebAssembly"
    };
    Err(OciError::LayerNotAComponent {
        reference: reference.to_string(),
        found: found.to_string(),
    })
}

/// Packs `component` (the bytes of `file_name`) for pushing under `tag`.
pub fn pack(component: Vec<u8>, file_name: &str, tag: Option<&str>) -> Result<Artifact, OciError> {
    if !component.starts_with(&COMPONENT_PREAMBLE) {
        return Err(OciError::NotAComponentFile {
            file: file_name.to_string(),
        });
    }
    let created = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let layer_digest = sha256_digest(&component);
    let layer_descriptor = OciDescriptor {
        media_type: WASM_LAYER_MEDIA_TYPE.to_string(),
        digest: layer_digest.clone(),
        size: component.len() as i64,
        urls: None,
        artifact_type: None,
        annotations: Some(BTreeMap::from([(
            "org.opencontainers.image.title".to_string(),
            file_name.to_string(),
        )])),
    };
    let config = serde_json::to_vec(&WasmConfig {
        created: created.clone(),
        architecture: "wasm",
        os: "wasip2",
        layer_digests: vec![layer_digest],
    })
    .expect("the config serializes");
    let config_descriptor = OciDescriptor {
        media_type: WASM_CONFIG_MEDIA_TYPE.to_string(),
        digest: sha256_digest(&config),
        size: config.len() as i64,
        urls: None,
        artifact_type: None,
        annotations: None,
    };
    let mut annotations =
        BTreeMap::from([("org.opencontainers.image.created".to_string(), created)]);
    if let Some(version) = tag.filter(|t| {
        t.chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == 'v')
            && *t != "latest"
    }) {
        annotations.insert(
            "org.opencontainers.image.version".to_string(),
            version.to_string(),
        );
    }
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(OCI_IMAGE_MEDIA_TYPE.to_string()),
        config: config_descriptor.clone(),
        layers: vec![layer_descriptor.clone()],
        subject: None,
        artifact_type: None,
        annotations: Some(annotations),
    };
    Ok(Artifact {
        config,
        config_descriptor,
        layer: component,
        layer_descriptor,
        manifest: serde_json::to_vec(&manifest).expect("the manifest serializes"),
    })
}

/// Checks that `manifest` (bytes as pulled) describes a component in the
/// layout [`pack`] writes, and returns its one layer's descriptor.
pub fn check_manifest(manifest: &[u8], reference: &str) -> Result<OciDescriptor, OciError> {
    let not_component = |found: String| OciError::NotAComponent {
        reference: reference.to_string(),
        found,
    };
    let parsed: OciImageManifest = serde_json::from_slice(manifest).map_err(|e| {
        not_component(format!(
            "a manifest that is not an OCI image manifest ({e})"
        ))
    })?;
    if let Some(media_type) = parsed.media_type.as_deref()
        && media_type != OCI_IMAGE_MEDIA_TYPE
    {
        return Err(not_component(format!("manifest media type {media_type}")));
    }
    if parsed.config.media_type != WASM_CONFIG_MEDIA_TYPE {
        return Err(not_component(format!(
            "config media type {}",
            parsed.config.media_type
        )));
    }
    match parsed.layers.as_slice() {
        [layer] if layer.media_type == WASM_LAYER_MEDIA_TYPE => Ok(layer.clone()),
        [layer] => Err(not_component(format!(
            "layer media type {}",
            layer.media_type
        ))),
        layers => Err(not_component(format!("{} layers", layers.len()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_component_passes_the_check_and_other_shapes_do_not() {
        let mut bytes = COMPONENT_PREAMBLE.to_vec();
        bytes.extend_from_slice(b"rest");
        let artifact = pack(bytes.clone(), "hello.wasm", Some("1.0.0")).unwrap();
        let layer = check_manifest(&artifact.manifest, "r").unwrap();
        assert_eq!(layer.digest, sha256_digest(&bytes));
        let text = String::from_utf8(artifact.manifest.clone()).unwrap();
        assert!(text.contains("org.opencontainers.image.version"), "{text}");
        // A core module is not a component, pushed or pulled.
        assert!(pack(b"\0asm\x01\0\0\0".to_vec(), "m.wasm", None).is_err());
        assert!(check_component(&bytes, "r").is_ok());
        let err = check_component(b"\0asm\x01\0\0\0", "r").unwrap_err();
        assert!(err.to_string().contains("core WebAssembly module"), "{err}");
        // Another config media type: refused.
        let other = text.replace(
            WASM_CONFIG_MEDIA_TYPE,
            "application/vnd.oci.image.config.v1+json",
        );
        assert!(matches!(
            check_manifest(other.as_bytes(), "r"),
            Err(OciError::NotAComponent { .. })
        ));
    }
}
