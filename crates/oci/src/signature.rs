//! Keyed signatures in cosign's format (ADR 0014).
//!
//! What is signed is cosign's *simple signing* payload, a small JSON
//! document naming the manifest digest:
//!
//! ```json
//! {"critical":{"identity":{"docker-reference":"REGISTRY/REPO"},
//!   "image":{"docker-manifest-digest":"sha256:…"},
//!   "type":"cosign container image signature"},"optional":null}
//! ```
//!
//! The signature is ECDSA P-256 with SHA-256 over the payload's bytes,
//! DER-encoded, base64 in the layer annotation
//! `dev.cosignproject.cosign/signature`. The payload is the layer
//! (`application/vnd.dev.cosign.simplesigning.v1+json`) of a manifest
//! tagged `sha256-<hex>.sig` in the component's repository, where cosign
//! puts it: `cosign verify --key KEY.pub REF` checks what `toolhost push
//! --sign` wrote, and toolhost checks what `cosign sign --key` wrote.
//!
//! Keys are PEM: a public key (`PUBLIC KEY`, SubjectPublicKeyInfo) to
//! verify, a private key (`PRIVATE KEY`, PKCS#8, or `EC PRIVATE KEY`,
//! SEC1) to sign.
//!
//! A signature counts when it is by a trusted key, names the manifest
//! digest being installed, and names (`docker-reference`) the repository
//! it is installed from: a signed artifact copied into another repository
//! is refused there (ADR 0032), unless its key is trusted with
//! `any_repository` (a mirror).

use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use p256::pkcs8::{DecodePrivateKey, DecodePublicKey};
use serde::{Deserialize, Serialize};

use super::OciError;

/// The signature layer's media type.
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation holding the base64 signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The payload's `critical.type`.
const PAYLOAD_TYPE: &str = "cosign container image signature";
/// The largest signature payload read: a simple-signing payload is a few
/// hundred bytes (a few KiB with `optional` annotations).
pub const MAX_PAYLOAD_BYTES: u64 = 64 << 10;

/// The signature layers of a signature manifest, with their signatures:
/// refused when it holds more than `max` (`oci.max_signatures`), so a
/// registry cannot make an install fetch and check without end.
pub fn signature_layers<'m>(
    manifest: &'m oci_client::manifest::OciImageManifest,
    max: u64,
    reference: &str,
) -> Result<Vec<(&'m oci_client::manifest::OciDescriptor, &'m String)>, OciError> {
    let layers: Vec<_> = manifest
        .layers
        .iter()
        .filter(|l| l.media_type == SIMPLE_SIGNING_MEDIA_TYPE)
        .filter_map(|l| Some((l, l.annotations.as_ref()?.get(SIGNATURE_ANNOTATION)?)))
        .collect();
    if layers.len() as u64 > max {
        return Err(OciError::TooManySignatures {
            reference: reference.to_string(),
            count: layers.len() as u64,
            max,
        });
    }
    Ok(layers)
}

/// The tag cosign gives the signatures of the manifest `digest`:
/// `sha256:<hex>` → `sha256-<hex>.sig`.
pub fn signature_tag(manifest_digest: &str) -> String {
    format!("{}.sig", manifest_digest.replacen(':', "-", 1))
}

/// One signature as found in a signature manifest: the payload and the
/// signature over it, both as transmitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureRecord {
    /// The payload, base64.
    pub payload: String,
    /// The signature annotation's value (base64 DER).
    pub signature: String,
}

/// The simple signing payload.
#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    critical: Critical,
    optional: Option<serde_json::Value>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Critical {
    identity: Identity,
    image: Image,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Identity {
    #[serde(rename = "docker-reference")]
    docker_reference: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Image {
    #[serde(rename = "docker-manifest-digest")]
    docker_manifest_digest: String,
}

/// The payload that signs `manifest_digest` in `repository`
/// (`registry/name`).
pub fn payload(repository: &str, manifest_digest: &str) -> Vec<u8> {
    serde_json::to_vec(&Payload {
        critical: Critical {
            identity: Identity {
                docker_reference: repository.to_string(),
            },
            image: Image {
                docker_manifest_digest: manifest_digest.to_string(),
            },
            kind: PAYLOAD_TYPE.to_string(),
        },
        optional: None,
    })
    .expect("the payload serializes")
}

/// A private key that signs.
pub struct SigningKeyFile {
    key: SigningKey,
}

impl SigningKeyFile {
    /// Reads a P-256 private key (PEM, PKCS#8 or SEC1) from `path`.
    pub fn load(path: &Path) -> Result<SigningKeyFile, OciError> {
        let text = std::fs::read_to_string(path).map_err(|source| OciError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let secret = p256::SecretKey::from_pkcs8_pem(&text)
            .or_else(|_| p256::SecretKey::from_sec1_pem(&text))
            .map_err(|_| OciError::BadKey {
                path: path.to_path_buf(),
                reason: "not a P-256 private key in PEM (PKCS#8 `PRIVATE KEY` or SEC1 \
                         `EC PRIVATE KEY`); an encrypted cosign key must be exported first"
                    .into(),
            })?;
        Ok(SigningKeyFile {
            key: SigningKey::from(secret),
        })
    }

    /// Signs `payload`.
    pub fn sign(&self, payload: &[u8]) -> SignatureRecord {
        let signature: Signature = self.key.sign(payload);
        SignatureRecord {
            payload: BASE64.encode(payload),
            signature: BASE64.encode(signature.to_der().as_bytes()),
        }
    }
}

/// A trusted key as configured: an entry of `trusted_keys`, either a path
/// or `{ path = "…", any_repository = true }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySpec {
    /// The public key file.
    pub path: PathBuf,
    /// Whether its signatures count whatever repository they name (for a
    /// mirror of the repository it signed in); `false` checks the
    /// signature's `docker-reference` against the repository installed from.
    pub any_repository: bool,
}

impl KeySpec {
    /// The key at `path`, checked against the repository (the default).
    pub fn new(path: impl Into<PathBuf>) -> KeySpec {
        KeySpec {
            path: path.into(),
            any_repository: false,
        }
    }
}

/// A public key the operator trusts.
#[derive(Debug, Clone)]
pub struct TrustedKey {
    /// Where it was read from (named in messages).
    pub path: PathBuf,
    /// Whether its signatures count for any repository ([`KeySpec`]).
    pub any_repository: bool,
    key: VerifyingKey,
}

impl TrustedKey {
    /// Reads the P-256 public key (PEM `PUBLIC KEY`) `spec` names.
    pub fn load(spec: &KeySpec) -> Result<TrustedKey, OciError> {
        let path = spec.path.as_path();
        let text = std::fs::read_to_string(path).map_err(|source| OciError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let key = VerifyingKey::from_public_key_pem(&text).map_err(|_| OciError::BadKey {
            path: path.to_path_buf(),
            reason: "not a P-256 public key in PEM (`PUBLIC KEY`), as `cosign \
                     generate-key-pair` writes"
                .into(),
        })?;
        Ok(TrustedKey {
            path: path.to_path_buf(),
            any_repository: spec.any_repository,
            key,
        })
    }

    fn verifies(&self, payload: &[u8], signature: &[u8]) -> bool {
        let Ok(signature) =
            Signature::from_der(signature).or_else(|_| Signature::from_slice(signature))
        else {
            return false;
        };
        self.key.verify(payload, &signature).is_ok()
    }
}

/// Whether the `docker-reference` `signed` names the repository of
/// `repository` (cosign's claim: `registry/name`, compared after Docker's
/// normalisation, so `docker.io/x` is `index.docker.io/library/x`; a tag
/// or digest after it is ignored).
fn names_repository(signed: &str, repository: &oci_client::Reference) -> bool {
    signed.parse::<oci_client::Reference>().is_ok_and(|signed| {
        signed.resolve_registry() == repository.resolve_registry()
            && signed.repository() == repository.repository()
    })
}

/// Checks that one of `records` is a signature by one of `keys` over a
/// payload naming `manifest_digest` and (unless the key is trusted for any
/// repository) the repository of `repository`. Returns the key that signed.
///
/// Refusals: no signature at all ([`OciError::Unsigned`]); signatures, but
/// none by a trusted key ([`OciError::UntrustedSignature`]); a trusted
/// signature over a payload naming another digest
/// ([`OciError::SignatureForAnotherDigest`]) or another repository
/// ([`OciError::SignatureForAnotherRepository`]).
pub fn verify<'k>(
    records: &[SignatureRecord],
    manifest_digest: &str,
    repository: &oci_client::Reference,
    keys: &'k [TrustedKey],
    reference: &str,
) -> Result<&'k TrustedKey, OciError> {
    if records.is_empty() {
        return Err(OciError::Unsigned {
            reference: reference.to_string(),
        });
    }
    let mut other_digest = None;
    let mut other_repository = None;
    for record in records {
        let (Ok(payload), Ok(signature)) = (
            BASE64.decode(&record.payload),
            BASE64.decode(&record.signature),
        ) else {
            continue;
        };
        for key in keys {
            if !key.verifies(&payload, &signature) {
                continue;
            }
            match serde_json::from_slice::<Payload>(&payload) {
                Ok(p)
                    if p.critical.kind == PAYLOAD_TYPE
                        && p.critical.image.docker_manifest_digest == manifest_digest =>
                {
                    let signed = &p.critical.identity.docker_reference;
                    if key.any_repository || names_repository(signed, repository) {
                        return Ok(key);
                    }
                    other_repository = Some((signed.clone(), key));
                }
                Ok(p) => other_digest = Some(p.critical.image.docker_manifest_digest),
                Err(_) => other_digest = Some("an unreadable payload".to_string()),
            }
        }
    }
    if let Some((signed, key)) = other_repository {
        return Err(OciError::SignatureForAnotherRepository {
            reference: reference.to_string(),
            repository: format!(
                "{}/{}",
                repository.resolve_registry(),
                repository.repository()
            ),
            // The payload's text, quoted: it comes from the registry.
            signed: format!("{signed:?}"),
            key: key.path.display().to_string(),
        });
    }
    match other_digest {
        Some(signed) => Err(OciError::SignatureForAnotherDigest {
            reference: reference.to_string(),
            digest: manifest_digest.to_string(),
            signed,
        }),
        None => Err(OciError::UntrustedSignature {
            reference: reference.to_string(),
            keys: keys
                .iter()
                .map(|k| k.path.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};

    fn keypair(dir: &Path, name: &str) -> (SigningKeyFile, TrustedKey) {
        let secret = p256::SecretKey::from_slice(&rand::random::<[u8; 32]>()).unwrap();
        let private = dir.join(format!("{name}.key"));
        let public = dir.join(format!("{name}.pub"));
        std::fs::write(&private, secret.to_pkcs8_pem(LineEnding::LF).unwrap()).unwrap();
        std::fs::write(
            &public,
            secret
                .public_key()
                .to_public_key_pem(LineEnding::LF)
                .unwrap(),
        )
        .unwrap();
        (
            SigningKeyFile::load(&private).unwrap(),
            TrustedKey::load(&KeySpec::new(public)).unwrap(),
        )
    }

    #[test]
    fn a_signature_verifies_only_with_its_key_and_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let (signer, trusted) = keypair(dir.path(), "a");
        let (_, other) = keypair(dir.path(), "b");
        let digest = format!("sha256:{}", "1".repeat(64));
        let record = signer.sign(&payload("r.example/a/b", &digest));
        let keys = [trusted.clone()];
        let repo: oci_client::Reference = "r.example/a/b:v1".parse().unwrap();
        assert!(verify(std::slice::from_ref(&record), &digest, &repo, &keys, "r").is_ok());
        assert!(matches!(
            verify(&[], &digest, &repo, &keys, "r"),
            Err(OciError::Unsigned { .. })
        ));
        assert!(matches!(
            verify(std::slice::from_ref(&record), &digest, &repo, &[other], "r"),
            Err(OciError::UntrustedSignature { .. })
        ));
        let another = format!("sha256:{}", "2".repeat(64));
        assert!(matches!(
            verify(&[record], &another, &repo, &keys, "r"),
            Err(OciError::SignatureForAnotherDigest { .. })
        ));
        assert_eq!(
            signature_tag(&digest),
            format!("sha256-{}.sig", "1".repeat(64))
        );
    }
}

#[cfg(test)]
mod claim_tests {
    use super::*;
    use p256::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};

    #[test]
    fn a_signature_counts_only_for_the_repository_it_names_unless_its_key_is_trusted_for_any() {
        let dir = tempfile::tempdir().unwrap();
        let secret = p256::SecretKey::from_slice(&rand::random::<[u8; 32]>()).unwrap();
        let private = dir.path().join("k.key");
        let public = dir.path().join("k.pub");
        std::fs::write(&private, secret.to_pkcs8_pem(LineEnding::LF).unwrap()).unwrap();
        let pem = secret.public_key().to_public_key_pem(LineEnding::LF);
        std::fs::write(&public, pem.unwrap()).unwrap();
        let signer = SigningKeyFile::load(&private).unwrap();
        let digest = format!("sha256:{}", "1".repeat(64));
        let record = signer.sign(&payload("r.example/acme/hello", &digest));
        let records = std::slice::from_ref(&record);
        let strict = [TrustedKey::load(&KeySpec::new(&public)).unwrap()];
        let at = |r: &str| r.parse::<oci_client::Reference>().unwrap();

        // The repository it was signed for, by tag or digest: accepted.
        assert!(
            verify(
                records,
                &digest,
                &at("r.example/acme/hello:v1"),
                &strict,
                "r"
            )
            .is_ok()
        );
        // Copied into another repository, or another registry: refused,
        // naming both and the opt-out.
        for copy in ["r.example/evil/hello:v1", "mirror.example/acme/hello:v1"] {
            let err = verify(records, &digest, &at(copy), &strict, "r").unwrap_err();
            assert!(
                matches!(err, OciError::SignatureForAnotherRepository { .. }),
                "{err}"
            );
            assert!(err.to_string().contains("any_repository"), "{err}");
        }
        // A key trusted for any repository (a mirror): accepted.
        let spec = KeySpec {
            path: public.clone(),
            any_repository: true,
        };
        let mirror = [TrustedKey::load(&spec).unwrap()];
        assert!(
            verify(
                records,
                &digest,
                &at("mirror.example/acme/hello:v1"),
                &mirror,
                "r"
            )
            .is_ok()
        );
        // Docker Hub's short names are normalised on both sides.
        let hub = signer.sign(&payload("index.docker.io/library/hello", &digest));
        assert!(verify(&[hub], &digest, &at("docker.io/hello:v1"), &strict, "r").is_ok());
    }

    #[test]
    fn a_signature_manifest_with_more_signatures_than_the_limit_is_refused() {
        let layer = |i: usize| {
            serde_json::json!({
                "mediaType": SIMPLE_SIGNING_MEDIA_TYPE,
                "digest": format!("sha256:{:064x}", i),
                "size": 10,
                "annotations": {SIGNATURE_ANNOTATION: "c2ln"}
            })
        };
        let manifest = |n: usize| -> oci_client::manifest::OciImageManifest {
            serde_json::from_value(serde_json::json!({
                "schemaVersion": 2,
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                           "digest": format!("sha256:{}", "0".repeat(64)), "size": 2},
                "layers": (0..n).map(layer).collect::<Vec<_>>()
            }))
            .unwrap()
        };
        assert_eq!(signature_layers(&manifest(3), 3, "r").unwrap().len(), 3);
        let err = signature_layers(&manifest(4), 3, "r").unwrap_err();
        assert!(matches!(
            err,
            OciError::TooManySignatures {
                count: 4,
                max: 3,
                ..
            }
        ));
        assert!(err.to_string().contains("oci.max_signatures"), "{err}");
    }
}
