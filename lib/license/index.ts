// Licensing: the signed license document, the service that holds the installed one, and the
// issuer's command line (keygen, sign, verify).
export {
  canonicalText, FIELDS, formatLicenseTime, licenseToXml, LicenseParseError, parseLicense, parseLicenseTime, signLicense,
  verifyLicense, type Field, type License, type LicenseFields, type SignatureAlg,
} from './license.js';
export {
  licensePaths, LicenseService, MESSAGES, readPublicKey, type LicenseDiff, type LicenseInfo, type LicensePaths,
  type LicenseServiceOptions, type LicenseState, type LicenseStatus, type UpdateOutcome,
} from './service.js';
export { CliError, issueLicense, keygen, licenseCommand, verifyLicenseFile, type SignOptions } from './cli.js';
export { LicenseWatch, type StateChange } from './watch.js';
