mod catalog;
mod differential;
mod sdk;
