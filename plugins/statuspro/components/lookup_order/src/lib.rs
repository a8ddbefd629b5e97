//! The StatusPro `lookup_order` tool as a toolhost component
//! (`statuspro_lookup_order.wasm`). The tool itself is
//! [`statuspro_tools::LookupOrder`]; this crate only exports it, so an operator can
//! serve and grant each StatusPro tool separately.

toolhost_sdk::export_tools!(statuspro_tools::LookupOrder);
