//! The StatusPro `get_order` tool as a toolhost component
//! (`statuspro_get_order.wasm`). The tool itself is
//! [`statuspro_tools::GetOrder`]; this crate only exports it, so an operator can
//! serve and grant each StatusPro tool separately.

toolhost_sdk::export_tools!(statuspro_tools::GetOrder);
