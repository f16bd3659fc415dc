// Licensing: the signed license document, the service that holds the installed one, and the
// issuer's command line (keygen, sign, verify).
export { canonicalText, formatLicenseTime, parseLicense, parseLicenseTime, verifyLicense } from './license.js';
export { licensePaths, LicenseService } from './service.js';
export { issueLicense, keygen, verifyLicenseFile } from './cli.js';
