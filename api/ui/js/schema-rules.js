import { CLIENT_ID_PATTERN } from './schema-constants.js';

const CLIENT_ID = new RegExp(CLIENT_ID_PATTERN);

/** True for a client ID the onboarding schema accepts. */
/** @param {string} id */
export function isClientId(id) {
  return id !== '' && CLIENT_ID.test(id);
}
