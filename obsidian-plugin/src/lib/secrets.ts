/**
 * Where the device token lives: Obsidian's keychain (SecretStorage, Obsidian 1.11.4+) where the app
 * has one, else this device's storage (1.8.7+), else data.json. Pure decisions over a small
 * interface, so that they are tested without Obsidian.
 */

/** The part of Obsidian's SecretStorage the plugin uses: secrets by ID, kept per vault on this device. */
export interface SecretStore {
	getSecret(id: string): string | null;
	setSecret(id: string, secret: string): void;
}

/** The keychain secret that holds the token unless the user picks another one in the settings. */
export const TOKEN_SECRET = 'vask-token';

/** An ID SecretStorage accepts: lowercase letters and digits, with dashes. */
export function isSecretId(id: string): boolean {
	return /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(id);
}

/** Obsidian's SecretStorage when the app has one, else null (an older app, or a stand-in without it). */
export function secretStoreOf(app: object): SecretStore | null {
	const store: unknown = Reflect.get(app, 'secretStorage');
	if (typeof store !== 'object' || store === null) return null;
	const get: unknown = Reflect.get(store, 'getSecret');
	const set: unknown = Reflect.get(store, 'setSecret');
	if (typeof get !== 'function' || typeof set !== 'function') return null;
	return {
		getSecret: (id) => {
			const value: unknown = Reflect.apply(get, store, [id]);
			return typeof value === 'string' ? value : null;
		},
		setSecret: (id, secret) => void Reflect.apply(set, store, [id, secret]),
	};
}

/** Where the token is kept on this device. */
export type TokenHome = 'keychain' | 'device' | 'data';

export function tokenHome(secrets: SecretStore | null, hasDeviceStorage: boolean): TokenHome {
	return secrets ? 'keychain' : hasDeviceStorage ? 'device' : 'data';
}

/** The token as stored before this load, outside the keychain. */
export interface StoredTokens {
	/** data.json's (copied to every device by sync tools): from an app without device storage, or an older plugin. */
	data: string;
	/** This device's storage: where the plugin kept it before the keychain. */
	device: string;
}

export interface TokenLoad {
	/** The token in effect. */
	token: string;
	/** Remove the token from data.json / this device's storage: it is in the keychain now. */
	clearData: boolean;
	clearDevice: boolean;
}

/** A secret's value as the plugin uses it ('' when there is none, or the store cannot say). */
export function readSecret(secrets: SecretStore, id: string): string {
	if (!isSecretId(id)) return '';
	try {
		return (secrets.getSecret(id) ?? '').trim();
	} catch {
		return '';
	}
}

/**
 * The token on load, moving an older one into the keychain (`secretId`, the secret the settings
 * name) the first time. Without a keychain nothing moves: this device's storage over data.json, as
 * before. With one, the keychain's token wins; when it has none, this device's (else data.json's) is
 * written there, and used only if it reads back. Then this device's copy goes (it was this device's
 * own, kept in plain text), and data.json's goes when it is the token now in the keychain. A
 * different one in data.json was written by another device, one whose app has no other place for it
 * (before Obsidian 1.8.7): removing it would leave that device without its token, so it stays.
 */
export function loadToken(secrets: SecretStore | null, secretId: string, stored: StoredTokens): TokenLoad {
	const data = stored.data.trim();
	const device = stored.device.trim();
	const legacy = device || data;
	if (!secrets) return { token: legacy, clearData: false, clearDevice: false };
	let token = readSecret(secrets, secretId);
	if (token === '' && legacy !== '' && isSecretId(secretId)) {
		try {
			secrets.setSecret(secretId, legacy);
		} catch {
			// (checked below)
		}
		token = readSecret(secrets, secretId);
		// The keychain did not take it: it stays where it was, and in use.
		if (token !== legacy) return { token: legacy, clearData: false, clearDevice: false };
	}
	return { token, clearData: data !== '' && data === token, clearDevice: device !== '' && token !== '' };
}
