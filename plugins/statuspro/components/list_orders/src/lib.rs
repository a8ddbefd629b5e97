//! The StatusPro `list_orders` tool as a toolhost component
//! (`statuspro_list_orders.wasm`). The tool itself is
//! [`statuspro_tools::ListOrders`]; this crate only exports it, so an operator can
//! serve and grant each StatusPro tool separately.

toolhost_sdk::export_tools!(statuspro_tools::ListOrders);
