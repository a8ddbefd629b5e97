//! Distribution through OCI registries: `push`, `pull`, `update`, and the
//! `oci://` entries of `components` (ADR 0014, docs/distribution.md).
//!
//! | file | job |
//! |---|---|
//! | [`reference`](mod@reference) | `oci://` references; the lock file that pins tags to digests |
//! | [`client`] | the registry protocol (`oci-client`): credentials, bounds, digest checks |
//! | [`artifact`] | the Wasm OCI artifact layout: packing a component, checking a manifest |
//! | [`signature`] | cosign-format keyed signatures: sign, verify |
//! | [`store`] | the content store: verified blobs by digest, for starts without the registry |
//!
//! An installation ([`Installer::install`]) goes: the plugin directory
//! exists → manifest (from the store, else the registry, by digest, read
//! to its bound) → its shape is a component → signature checked against
//! the trust policy (the manifest digest and the repository it names) →
//! layer (store, else registry, bounded and digest-checked) → its bytes are
//! a component → stored → written into the plugin directory as one whole
//! file (write, then rename), where the watcher loads it like a copied file.
//! Any refusal installs and stores nothing.

pub mod artifact;
pub mod client;
pub mod reference;
pub mod signature;
pub mod store;

use std::path::{Path, PathBuf};

use thiserror::Error;

pub use reference::{ComponentRef, LockFile, SCHEME};

use client::{ClientSettings, FetchLimits, RegistryClient};
use signature::{KeySpec, SignatureRecord, SigningKeyFile, TrustedKey};
use store::ContentStore;

/// Why a push, pull or install did not happen.
#[derive(Debug, Error)]
pub enum OciError {
    /// The reference cannot be parsed.
    #[error(
        "{reference:?} is not a component reference ({reason}); write REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:DIGEST"
    )]
    BadReference {
        /// The reference as written.
        reference: String,
        /// What is wrong.
        reason: String,
    },
    /// A digest toolhost cannot check.
    #[error("unsupported digest {digest:?}: only sha256 digests are accepted")]
    UnsupportedDigest {
        /// The digest.
        digest: String,
    },
    /// The lock file cannot be read or written.
    #[error("the lock file {} is not valid ({reason}); delete it to resolve every tag again", path.display())]
    BadLockFile {
        /// Its path.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A file-system error.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The registry refused or failed.
    #[error("registry error for {reference}: {reason}")]
    Registry {
        /// The reference.
        reference: String,
        /// The registry's answer.
        reason: String,
    },
    /// The registry wants credentials it did not get, or refused them.
    #[error(
        "the registry {registry} refused the credentials (or wants some): log in with `docker login {registry}`, or set TOOLHOST_REGISTRY={registry} with TOOLHOST_REGISTRY_USERNAME and TOOLHOST_REGISTRY_PASSWORD"
    )]
    Unauthorized {
        /// The registry.
        registry: String,
    },
    /// Credentials in the environment that name no registry.
    #[error(
        "TOOLHOST_REGISTRY_USERNAME and TOOLHOST_REGISTRY_PASSWORD are set but TOOLHOST_REGISTRY is not: set it to the one registry they are for (e.g. TOOLHOST_REGISTRY={registry}); they are sent to no other"
    )]
    UnscopedCredentials {
        /// The registry being contacted.
        registry: String,
    },
    /// The registry's token service may not receive its credentials.
    #[error(
        "refused to send the credentials for {registry} to the token service it names, {realm}: {reason}; nothing was sent"
    )]
    TokenRealmRefused {
        /// The registry.
        registry: String,
        /// The realm it named.
        realm: String,
        /// Why, and what to configure.
        reason: String,
    },
    /// The registry has no such manifest.
    #[error("{reference} does not exist in the registry")]
    NotFound {
        /// The reference.
        reference: String,
    },
    /// Bytes do not hash to the digest that names them.
    #[error(
        "refused: the {what} does not match its digest (expected {expected}, got {actual}); it was tampered with or corrupted, and nothing was installed"
    )]
    DigestMismatch {
        /// Which bytes.
        what: String,
        /// The digest they should have.
        expected: String,
        /// The digest they have.
        actual: String,
    },
    /// The manifest is over `oci.max_manifest_bytes`.
    #[error(
        "refused: the manifest of {reference} is over the limit of {max} bytes (oci.max_manifest_bytes): {size} bytes or more; reading stopped there"
    )]
    ManifestTooLarge {
        /// The reference.
        reference: String,
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// The layer is over `oci.max_blob_bytes`.
    #[error(
        "refused: the component layer of {reference} is over the limit of {max} bytes (oci.max_blob_bytes): {size} bytes or more; reading stopped there"
    )]
    BlobTooLarge {
        /// The reference.
        reference: String,
        /// Its size (as announced, or as read so far).
        size: u64,
        /// The limit.
        max: u64,
    },
    /// The layer's bytes are not a component (a core module, say).
    #[error(
        "refused: the layer of {reference} is not a WebAssembly component ({found}); `toolhost push` publishes components only, and nothing was installed"
    )]
    LayerNotAComponent {
        /// The reference.
        reference: String,
        /// What the bytes are.
        found: String,
    },
    /// The plugin directory to install into is missing.
    #[error(
        "the plugin directory {} does not exist; create it (mkdir -p {}) or name another with --plugins",
        path.display(), path.display()
    )]
    NoPluginDirectory {
        /// The directory.
        path: PathBuf,
    },
    /// The signature manifest holds more signatures than considered.
    #[error(
        "refused: the signature manifest of {reference} holds {count} signatures, over the limit of {max} (oci.max_signatures)"
    )]
    TooManySignatures {
        /// The reference.
        reference: String,
        /// How many it holds.
        count: u64,
        /// The limit.
        max: u64,
    },
    /// A signature payload over its fixed bound.
    #[error(
        "refused: a signature payload of {reference} is {size} bytes, over the limit of {max} for a cosign simple-signing payload"
    )]
    SignatureTooLarge {
        /// The reference.
        reference: String,
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// The artifact is not a component in the Wasm OCI layout.
    #[error(
        "refused: {reference} is not a WebAssembly component artifact (found {found}; expected config application/vnd.wasm.config.v0+json and one application/wasm layer, as `toolhost push` writes)"
    )]
    NotAComponent {
        /// The reference.
        reference: String,
        /// What was found instead.
        found: String,
    },
    /// `push` was given a file that is not a component.
    #[error(
        "{file} is not a WebAssembly component (a core module or another file); build it for wasm32-wasip2"
    )]
    NotAComponentFile {
        /// The file.
        file: String,
    },
    /// A key file cannot be used.
    #[error("the key {} cannot be used: {reason}", path.display())]
    BadKey {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A signature is required and there is none.
    #[error(
        "refused: {reference} is not signed, and a signature is required (oci.require_signature); sign it with `toolhost push --sign KEY`, or set require_signature = false for its plugin"
    )]
    Unsigned {
        /// The reference.
        reference: String,
    },
    /// Signed, but by no trusted key.
    #[error(
        "refused: no signature on {reference} is by a trusted key ({keys}); add the signer's public key to oci.trusted_keys or the plugin's trusted_keys"
    )]
    UntrustedSignature {
        /// The reference.
        reference: String,
        /// The keys tried.
        keys: String,
    },
    /// A trusted signature, but over another manifest.
    #[error(
        "refused: the signature on {reference} by a trusted key signs {signed}, not {digest}: it was copied from another artifact"
    )]
    SignatureForAnotherDigest {
        /// The reference.
        reference: String,
        /// The manifest being installed.
        digest: String,
        /// What the signature names.
        signed: String,
    },
    /// A trusted signature, but for another repository.
    #[error(
        "refused: the signature on {reference} by a trusted key ({key}) was made for {signed}, not {repository}: the artifact was copied from another repository; if this repository mirrors {signed}, trust the key with any_repository = true ({{ path = \"…\", any_repository = true }} in trusted_keys)"
    )]
    SignatureForAnotherRepository {
        /// The reference.
        reference: String,
        /// The repository being installed from (`registry/name`).
        repository: String,
        /// The `docker-reference` the signature names.
        signed: String,
        /// The key.
        key: String,
    },
}

/// The resolved `[oci]` table (resolved by toolhost's `config` from `toolhost.toml`).
#[derive(Debug, Clone)]
pub struct OciSettings {
    /// Keys trusted for every OCI component.
    pub trusted_keys: Vec<KeySpec>,
    /// Whether OCI components must carry a trusted signature.
    pub require_signature: bool,
    /// Largest manifest read, in bytes.
    pub max_manifest_bytes: u64,
    /// Largest component layer read, in bytes.
    pub max_blob_bytes: u64,
    /// Most signatures considered on one manifest.
    pub max_signatures: u64,
    /// The longest one component's install may take in all
    /// (`oci.pull_timeout_secs`).
    pub pull_timeout: std::time::Duration,
    /// Hosts besides a registry's own whose token service may receive its
    /// credentials (`oci.token_hosts`).
    pub token_hosts: Vec<String>,
    /// The content store's directory, when the operator set one.
    pub store_dir: Option<PathBuf>,
    /// Where the store is when `store_dir` is unset, if anywhere: the host
    /// puts it beside its compile cache (`$XDG_CACHE_HOME/toolhost-oci` or
    /// `~/.cache/toolhost-oci`).
    pub default_store_dir: Option<PathBuf>,
}

/// `install` of `reference`, under one deadline for the whole of it
/// (`oci.pull_timeout_secs`): resolving, the manifest, the layer and the
/// signatures together, however slowly their bytes come.
pub async fn within_pull_timeout<T>(
    settings: &OciSettings,
    reference: &ComponentRef,
    install: impl std::future::Future<Output = Result<T, OciError>>,
) -> Result<T, OciError> {
    tokio::time::timeout(settings.pull_timeout, install)
        .await
        .unwrap_or_else(|_| {
            Err(OciError::Registry {
                reference: reference.text.clone(),
                reason: format!(
                    "the install took longer than oci.pull_timeout_secs ({} s); check the \
                     registry, or raise it for a slow one",
                    settings.pull_timeout.as_secs()
                ),
            })
        })
}

/// Who may sign what an installation accepts.
#[derive(Debug, Clone)]
pub struct TrustPolicy {
    /// Whether a trusted signature is required.
    pub require_signature: bool,
    /// The keys whose signatures count.
    pub keys: Vec<TrustedKey>,
}

impl OciSettings {
    /// What a registry client needs of these settings.
    pub fn client_settings(&self) -> ClientSettings {
        ClientSettings {
            limits: FetchLimits {
                max_manifest_bytes: self.max_manifest_bytes,
                max_blob_bytes: self.max_blob_bytes,
                max_signatures: self.max_signatures,
            },
            token_hosts: self.token_hosts.clone(),
        }
    }
}

impl TrustPolicy {
    /// The policy for one component: the global keys of `oci` plus
    /// `block_keys` (those of the `[plugins.NAME]` block matching it),
    /// whose `block_require_signature` overrides the global one.
    pub fn new(
        oci: &OciSettings,
        block_keys: &[KeySpec],
        block_require_signature: Option<bool>,
    ) -> Result<TrustPolicy, OciError> {
        let keys = oci
            .trusted_keys
            .iter()
            .chain(block_keys)
            .map(TrustedKey::load)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TrustPolicy {
            require_signature: block_require_signature.unwrap_or(oci.require_signature),
            keys,
        })
    }
}

/// What [`Installer::install`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The manifest digest installed.
    pub digest: String,
    /// The file written (or found already current).
    pub path: PathBuf,
    /// Whether the file's content changed.
    pub changed: bool,
    /// The key whose signature was verified, if any.
    pub signed_by: Option<PathBuf>,
    /// The SHA-256 of the component bytes verified and installed (hex):
    /// what the file must hold to be loaded as this component.
    pub component_sha256: String,
}

/// Installs components from registries (or the content store) into a plugin
/// directory.
pub struct Installer {
    /// Where verified blobs are kept.
    pub store: ContentStore,
    /// Size bounds and where credentials may go.
    pub settings: ClientSettings,
}

impl Installer {
    /// An installer with the store and bounds `settings` names (the store
    /// in `oci.store_dir`, else in its default directory).
    pub fn new(settings: &OciSettings) -> Result<Installer, OciError> {
        let dir = settings
            .store_dir
            .clone()
            .or_else(|| settings.default_store_dir.clone())
            .ok_or_else(|| OciError::Io {
                path: PathBuf::from("toolhost-oci"),
                source: std::io::Error::other(
                    "no cache directory (set XDG_CACHE_HOME or HOME, or oci.store_dir)",
                ),
            })?;
        Ok(Installer {
            store: ContentStore::open(&dir)?,
            settings: settings.client_settings(),
        })
    }

    /// The manifest digest `reference` names now: its own digest, or the
    /// registry's answer for its tag.
    pub async fn resolve(&self, reference: &ComponentRef) -> Result<String, OciError> {
        if let Some(digest) = reference.pinned_digest() {
            return Ok(digest.to_string());
        }
        RegistryClient::for_reference(&reference.parsed, &self.settings)
            .resolve(&reference.parsed)
            .await
    }

    /// Installs the manifest `digest` of `reference`'s repository into
    /// `plugins` as [`ComponentRef::file_name`], after every check; uses
    /// the registry only for what the store lacks.
    pub async fn install(
        &self,
        reference: &ComponentRef,
        digest: &str,
        policy: &TrustPolicy,
        plugins: &Path,
    ) -> Result<Installed, OciError> {
        check_plugin_directory(plugins)?;
        let name = reference.to_string();
        let at_digest = reference.at_digest(digest);
        let limits = self.settings.limits;
        // The registry is contacted only for what the store lacks.
        let registry = std::cell::OnceCell::new();
        let connect =
            || registry.get_or_init(|| RegistryClient::for_reference(&at_digest, &self.settings));

        // 1. The manifest, by digest.
        let manifest = match self.store.get(digest)? {
            Some(bytes) => bytes,
            None => match connect().manifest(&at_digest).await? {
                Some((bytes, _)) => bytes,
                None => return Err(OciError::NotFound { reference: name }),
            },
        };
        if manifest.len() as u64 > limits.max_manifest_bytes {
            return Err(OciError::ManifestTooLarge {
                reference: name,
                size: manifest.len() as u64,
                max: limits.max_manifest_bytes,
            });
        }

        // 2. Its shape.
        let layer = artifact::check_manifest(&manifest, &name)?;

        // 3. Its signature, against the policy in force now.
        let mut signed_by = None;
        let mut fetched_signatures = None;
        if policy.require_signature {
            let stored = self.store.signatures(digest)?;
            let repository = &reference.parsed;
            let key = match signature::verify(&stored, digest, repository, &policy.keys, &name) {
                Ok(key) => key,
                Err(stored_error) => {
                    let records = match self.fetch_signatures(connect(), reference, digest).await {
                        Ok(records) => records,
                        Err(_) if !stored.is_empty() => return Err(stored_error),
                        Err(e) => return Err(e),
                    };
                    let key = signature::verify(&records, digest, repository, &policy.keys, &name)?;
                    fetched_signatures = Some(records);
                    key
                }
            };
            signed_by = Some(key.path.clone());
        }

        // 4. The layer.
        let component = match self.store.get(&layer.digest)? {
            Some(bytes) => bytes,
            None => connect().blob(&at_digest, &layer).await?,
        };
        if component.len() as u64 > limits.max_blob_bytes {
            return Err(OciError::BlobTooLarge {
                reference: name,
                size: component.len() as u64,
                max: limits.max_blob_bytes,
            });
        }
        // A well-formed manifest can still carry a core module (or any
        // bytes): `push` refuses those, and so does an install, before
        // anything is stored or written.
        artifact::check_component(&component, &name)?;

        // 5. Everything passed: keep it, then install it.
        self.store.put(digest, &manifest)?;
        self.store.put(&layer.digest, &component)?;
        if let Some(records) = fetched_signatures {
            self.store.put_signatures(digest, &records)?;
        }
        let path = plugins.join(reference.file_name());
        let changed = !holds_exactly(&path, &component);
        if changed {
            store::write_atomically(&path, &component)?;
        }
        Ok(Installed {
            digest: digest.to_string(),
            path,
            changed,
            signed_by,
            component_sha256: hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&component)),
        })
    }

    /// The signature records the registry holds for the manifest `digest`
    /// (cosign's `sha256-<hex>.sig` tag); none if there is no such tag.
    async fn fetch_signatures(
        &self,
        registry: &RegistryClient,
        reference: &ComponentRef,
        digest: &str,
    ) -> Result<Vec<SignatureRecord>, OciError> {
        let tag = reference.at_tag(&signature::signature_tag(digest));
        let Some((manifest, _)) = registry.manifest(&tag).await? else {
            return Ok(Vec::new());
        };
        let parsed: oci_client::manifest::OciImageManifest = match serde_json::from_slice(&manifest)
        {
            Ok(parsed) => parsed,
            Err(_) => return Ok(Vec::new()),
        };
        let name = reference.to_string();
        let mut records = Vec::new();
        for (layer, sig) in
            signature::signature_layers(&parsed, self.settings.limits.max_signatures, &name)?
        {
            let max = signature::MAX_PAYLOAD_BYTES;
            let too_large = |size| OciError::SignatureTooLarge {
                reference: name.clone(),
                size,
                max,
            };
            let payload = registry.blob_capped(&tag, layer, max, &too_large).await?;
            use base64::Engine as _;
            records.push(SignatureRecord {
                payload: base64::engine::general_purpose::STANDARD.encode(payload),
                signature: sig.clone(),
            });
        }
        Ok(records)
    }
}

/// Refuses a plugin directory that does not exist (or is not a directory),
/// before anything is fetched, so the error names it rather than a file in it.
pub fn check_plugin_directory(plugins: &Path) -> Result<(), OciError> {
    if plugins.is_dir() {
        Ok(())
    } else {
        Err(OciError::NoPluginDirectory {
            path: plugins.to_path_buf(),
        })
    }
}

/// Publishes the component file `file` as `reference`; signs it with `key`
/// when given. Returns the manifest digest.
pub async fn push(
    file: &Path,
    reference: &ComponentRef,
    key: Option<&Path>,
    settings: &ClientSettings,
) -> Result<String, OciError> {
    let bytes = std::fs::read(file).map_err(|source| OciError::Io {
        path: file.to_path_buf(),
        source,
    })?;
    let signer = key.map(SigningKeyFile::load).transpose()?;
    let file_name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| reference.file_name());
    let packed = artifact::pack(bytes, &file_name, reference.parsed.tag())?;
    let target = &reference.parsed;
    let registry = RegistryClient::for_push(target, settings);
    registry.authenticate_push(target).await?;
    registry
        .push_blob(target, &packed.layer, &packed.layer_descriptor.digest)
        .await?;
    registry
        .push_blob(target, &packed.config, &packed.config_descriptor.digest)
        .await?;
    registry.push_manifest(target, &packed.manifest).await?;
    let digest = store::sha256_digest(&packed.manifest);
    if let Some(signer) = signer {
        let repository = format!("{}/{}", target.resolve_registry(), target.repository());
        let payload = signature::payload(&repository, &digest);
        let record = signer.sign(&payload);
        push_signature(&registry, reference, &digest, &payload, &record).await?;
    }
    Ok(digest)
}

/// Pushes the signature manifest for `digest` in cosign's layout: an OCI
/// manifest tagged `sha256-<hex>.sig` whose layer is the payload, with the
/// signature in its annotation.
async fn push_signature(
    registry: &RegistryClient,
    reference: &ComponentRef,
    digest: &str,
    payload: &[u8],
    record: &SignatureRecord,
) -> Result<(), OciError> {
    use oci_client::manifest::{
        IMAGE_CONFIG_MEDIA_TYPE, OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest,
    };
    let tag = reference.at_tag(&signature::signature_tag(digest));
    let payload_digest = store::sha256_digest(payload);
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": "",
        "config": {},
        "created": "0001-01-01T00:00:00Z",
        "history": [{"created": "0001-01-01T00:00:00Z"}],
        "os": "",
        "rootfs": {"type": "layers", "diff_ids": [payload_digest]},
    }))
    .expect("the config serializes");
    let config_digest = store::sha256_digest(&config);
    registry.push_blob(&tag, payload, &payload_digest).await?;
    registry.push_blob(&tag, &config, &config_digest).await?;
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(OCI_IMAGE_MEDIA_TYPE.to_string()),
        config: OciDescriptor {
            media_type: IMAGE_CONFIG_MEDIA_TYPE.to_string(),
            digest: config_digest,
            size: config.len() as i64,
            urls: None,
            artifact_type: None,
            annotations: None,
        },
        layers: vec![OciDescriptor {
            media_type: signature::SIMPLE_SIGNING_MEDIA_TYPE.to_string(),
            digest: payload_digest,
            size: payload.len() as i64,
            urls: None,
            artifact_type: None,
            annotations: Some(
                [(
                    signature::SIGNATURE_ANNOTATION.to_string(),
                    record.signature.clone(),
                )]
                .into(),
            ),
        }],
        subject: None,
        artifact_type: None,
        annotations: None,
    };
    let bytes = serde_json::to_vec(&manifest).expect("the manifest serializes");
    registry.push_manifest(&tag, &bytes).await
}

/// One line of `toolhost update`'s report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    /// The reference.
    pub reference: String,
    /// The digest the lock had, if any.
    pub before: Option<String>,
    /// The digest it has now.
    pub after: String,
}

/// What [`install_configured`] did.
#[derive(Debug, Default)]
pub struct Installs {
    /// What changed in the lock (every entry with `update`).
    pub updates: Vec<Update>,
    /// The entries refused: (reference, why). Their files are not verified.
    pub failures: Vec<(String, OciError)>,
    /// Each entry installed, by the file name it is installed as: the
    /// SHA-256 (hex) of the component bytes verified for it. A file a
    /// `components` entry names loads only if it holds exactly these bytes.
    pub verified: std::collections::BTreeMap<String, String>,
    /// The key that verified each entry installed with a signature, by the
    /// file name it is installed as: the key file's name as the trust
    /// policy names it (`acme.pub`).
    pub signers: std::collections::BTreeMap<String, String>,
}

/// Installs every entry of `components` into `plugins` with the store and
/// bounds of `settings` and the trust policy `policy_for` gives its file
/// name (toolhost's `Config::install_components`), pinning tags in
/// the lock file `lock_path`. With `update`, tags are resolved
/// again and the lock follows them (a new digest is installed only if it
/// passes every check; otherwise the old pin stays and the error is
/// reported). Returns what changed in the lock, the failures
/// (reference, error; one does not stop the others) and the bytes verified
/// for each file.
pub async fn install_configured(
    components: &[ComponentRef],
    settings: &OciSettings,
    policy_for: impl Fn(&str) -> Result<TrustPolicy, OciError>,
    lock_path: &Path,
    plugins: &Path,
    update: bool,
) -> Result<Installs, OciError> {
    if components.is_empty() {
        return Ok(Installs::default());
    }
    let installer = Installer::new(settings)?;
    let mut lock = LockFile::load(lock_path)?;
    let mut updates = Vec::new();
    let mut failures = Vec::new();
    let mut verified = std::collections::BTreeMap::new();
    let mut signers = std::collections::BTreeMap::new();
    for reference in components {
        let before = lock.digest(reference).map(str::to_string);
        let install = async {
            let digest = match (&before, update) {
                (Some(pinned), false) if reference.pinned_digest().is_none() => pinned.clone(),
                _ => installer.resolve(reference).await?,
            };
            let policy = policy_for(&reference.file_name())?;
            installer
                .install(reference, &digest, &policy, plugins)
                .await
        };
        // A registry that trickles its bytes holds up this component, not
        // the start of every other.
        let result = within_pull_timeout(settings, reference, install).await;
        match result {
            Ok(installed) => {
                verified.insert(reference.file_name(), installed.component_sha256.clone());
                if let Some(name) = installed
                    .signed_by
                    .as_deref()
                    .and_then(|key| key.file_name())
                    .and_then(|name| name.to_str())
                {
                    signers.insert(reference.file_name(), name.to_string());
                }
                if reference.pinned_digest().is_none()
                    && before.as_deref() != Some(installed.digest.as_str())
                {
                    lock.components
                        .insert(reference.text.clone(), installed.digest.clone());
                }
                if before.as_deref() != Some(installed.digest.as_str()) || update {
                    updates.push(Update {
                        reference: reference.to_string(),
                        before: before.clone(),
                        after: installed.digest.clone(),
                    });
                }
                tracing::info!(
                    "{reference}: {} installed as {}{}",
                    installed.digest,
                    installed.path.display(),
                    if installed.changed {
                        ""
                    } else {
                        " (unchanged)"
                    }
                );
            }
            Err(e) => failures.push((reference.to_string(), e)),
        }
    }
    if updates
        .iter()
        .any(|u| u.before.as_deref() != Some(u.after.as_str()))
    {
        lock.save(lock_path)?;
    }
    Ok(Installs {
        updates,
        failures,
        verified,
        signers,
    })
}

/// Whether the file at `path` is a regular file holding exactly `bytes`:
/// read no further than one byte past them, opened without blocking (a
/// FIFO or a device put in its place is neither waited on nor read without
/// end; it is replaced).
fn holds_exactly(path: &Path, bytes: &[u8]) -> bool {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    else {
        return false;
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut current = Vec::with_capacity(bytes.len());
    file.take(bytes.len() as u64 + 1)
        .read_to_end(&mut current)
        .is_ok_and(|_| current == bytes)
}

#[cfg(test)]
mod install_target_tests {
    use super::holds_exactly;

    #[test]
    fn an_install_target_is_compared_without_reading_past_the_component() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tool.wasm");
        assert!(!holds_exactly(&path, b"abc"), "absent");
        std::fs::write(&path, b"abc").unwrap();
        assert!(holds_exactly(&path, b"abc"));
        assert!(!holds_exactly(&path, b"ab"), "longer than the component");
        assert!(!holds_exactly(&path, b"abd"));
        // A FIFO with no writer in its place: not waited on.
        std::fs::remove_file(&path).unwrap();
        let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid, NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        assert!(!holds_exactly(&path, b"abc"));
    }
}
