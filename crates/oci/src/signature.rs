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

/// A public key the operator trusts.
#[derive(Debug, Clone)]
pub struct TrustedKey {
    /// Where it was read from (named in messages).
    pub path: PathBuf,
    key: VerifyingKey,
}

impl TrustedKey {
    /// Reads a P-256 public key (PEM `PUBLIC KEY`) from `path`.
    pub fn load(path: &Path) -> Result<TrustedKey, OciError> {
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

/// Checks that one of `records` is a signature by one of `keys` over a
/// payload naming `manifest_digest`. Returns the key that signed.
///
/// Refusals: no signature at all ([`OciError::Unsigned`]); signatures, but
/// none by a trusted key ([`OciError::UntrustedSignature`]); a trusted
/// signature over a payload naming another digest
/// ([`OciError::SignatureForAnotherDigest`]).
pub fn verify<'k>(
    records: &[SignatureRecord],
    manifest_digest: &str,
    keys: &'k [TrustedKey],
    reference: &str,
) -> Result<&'k TrustedKey, OciError> {
    if records.is_empty() {
        return Err(OciError::Unsigned {
            reference: reference.to_string(),
        });
    }
    let mut other_digest = None;
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
                    return Ok(key);
                }
                Ok(p) => other_digest = Some(p.critical.image.docker_manifest_digest),
                Err(_) => other_digest = Some("an unreadable payload".to_string()),
            }
        }
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
            TrustedKey::load(&public).unwrap(),
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
        assert!(verify(std::slice::from_ref(&record), &digest, &keys, "r").is_ok());
        assert!(matches!(
            verify(&[], &digest, &keys, "r"),
            Err(OciError::Unsigned { .. })
        ));
        assert!(matches!(
            verify(std::slice::from_ref(&record), &digest, &[other], "r"),
            Err(OciError::UntrustedSignature { .. })
        ));
        let another = format!("sha256:{}", "2".repeat(64));
        assert!(matches!(
            verify(&[record], &another, &keys, "r"),
            Err(OciError::SignatureForAnotherDigest { .. })
        ));
        assert_eq!(
            signature_tag(&digest),
            format!("sha256-{}.sig", "1".repeat(64))
        );
    }
}
