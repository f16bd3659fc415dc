// The product version: `version` of every management envelope, hwinfo's ProductVer, and the
// answer to PURGE on the service port (which runs in the workers, without the API server).
export const PRODUCT_VERSION = '0.1.0';
