/**
 * The token in Obsidian's keychain (SecretStorage, 1.11.4+) where the app has one: found first, moved
 * there from device storage or data.json once, saved there when changed; older apps as before.
 */
import { describe, expect, it } from 'vitest';
import { TOKEN_SECRET, isSecretId, loadToken, secretStoreOf, tokenHome, type SecretStore } from '../../src/lib/secrets';
import { DEFAULT_SETTINGS, SETTINGS_VERSION, normalizeDevice, normalizeSettings, splitPatch, type DeviceSettings } from '../../src/lib/settings';
import { SettingsStore, type SettingsIO } from '../../src/lib/settingsStore';

/** Obsidian's SecretStorage as the app has it: IDs checked as it checks them, values as strings. */
class FakeSecretStorage {
	readonly secrets = new Map<string, string>();
	writes = 0;
	constructor(initial: Record<string, string> = {}) {
		for (const [k, v] of Object.entries(initial)) this.secrets.set(k, v);
	}
	getSecret(id: string): string | null {
		return this.secrets.get(id) ?? null;
	}
	setSecret(id: string, secret: string): void {
		if (!/^[a-z0-9-]+$/.test(id)) throw new Error(`invalid secret id: ${id}`);
		this.writes++;
		this.secrets.set(id, secret);
	}
	listSecrets(): string[] {
		return [...this.secrets.keys()];
	}
}

/** The plugin's three homes for settings, in memory: data.json, device storage, the keychain. */
class FakeHomes {
	data: unknown;
	device: unknown;
	dataWrites = 0;
	constructor(
		data: Record<string, unknown> | null,
		device: DeviceSettings | null | undefined,
		readonly keychain: FakeSecretStorage | null,
	) {
		this.data = data === null ? null : { ...data };
		this.device = device;
	}
	/** device undefined: the app has no device storage (before 1.8.7). */
	io(): SettingsIO {
		const hasDevice = this.device !== undefined;
		return {
			loadData: async () => structuredClone(this.data),
			saveData: async (d) => {
				this.dataWrites++;
				this.data = structuredClone(d);
			},
			device: hasDevice ? { load: () => structuredClone(this.device), save: (d) => void (this.device = structuredClone(d)) } : null,
			secrets: this.keychain ? secretStoreOf({ secretStorage: this.keychain }) : null,
		};
	}
	get dataToken(): unknown {
		return (this.data as Record<string, unknown> | null)?.token;
	}
}

describe('secretStoreOf: the keychain, where the app has one', () => {
	it('finds SecretStorage on an app that has it, and nothing on an older app or a half one', () => {
		const keychain = new FakeSecretStorage({ 'vask-token': 't1' });
		const store = secretStoreOf({ secretStorage: keychain });
		expect(store?.getSecret('vask-token')).toBe('t1');
		store?.setSecret('vask-token', 't2');
		expect(keychain.getSecret('vask-token')).toBe('t2');
		expect(secretStoreOf({})).toBeNull();
		expect(secretStoreOf({ secretStorage: null })).toBeNull();
		expect(secretStoreOf({ secretStorage: { getSecret: () => null } })).toBeNull();
		expect(secretStoreOf({ secretStorage: 'no' })).toBeNull();
		// a value that is no string reads as none
		expect(secretStoreOf({ secretStorage: { getSecret: () => 7, setSecret: () => undefined } })?.getSecret('x')).toBeNull();
	});

	it('secret IDs as SecretStorage takes them; where the token is kept per app', () => {
		expect(isSecretId(TOKEN_SECRET)).toBe(true);
		expect(['vask', 'a1-b2', 'x'].every(isSecretId)).toBe(true);
		expect(['', 'Vask', 'vask_token', '-x', 'x-', 'a b'].some(isSecretId)).toBe(false);
		expect(tokenHome(new FakeSecretStorage(), true)).toBe('keychain');
		expect(tokenHome(null, true)).toBe('device');
		expect(tokenHome(null, false)).toBe('data');
	});
});

describe('loadToken: the decision on load', () => {
	it('an older app: this device storage over data.json, nothing moved', () => {
		expect(loadToken(null, TOKEN_SECRET, { data: 'd', device: 'v' })).toEqual({ token: 'v', clearData: false, clearDevice: false });
		expect(loadToken(null, TOKEN_SECRET, { data: 'd', device: '' })).toEqual({ token: 'd', clearData: false, clearDevice: false });
	});

	it('the keychain first: its token wins, and plain-text copies of it go', () => {
		const k = new FakeSecretStorage({ 'vask-token': 'k' });
		const store = secretStoreOf({ secretStorage: k })!;
		expect(loadToken(store, TOKEN_SECRET, { data: 'k', device: 'old' })).toEqual({ token: 'k', clearData: true, clearDevice: true });
		// data.json's other token is another device's (an app without device storage): it stays
		expect(loadToken(store, TOKEN_SECRET, { data: 'laptop', device: '' })).toEqual({ token: 'k', clearData: false, clearDevice: false });
		expect(k.writes).toBe(0);
	});

	it('moves device storage\'s token (else data.json\'s) into an empty keychain', () => {
		const k = new FakeSecretStorage();
		const store = secretStoreOf({ secretStorage: k })!;
		expect(loadToken(store, TOKEN_SECRET, { data: 'd', device: 'v' })).toEqual({ token: 'v', clearData: false, clearDevice: true });
		expect(k.getSecret(TOKEN_SECRET)).toBe('v');
		const k2 = new FakeSecretStorage();
		expect(loadToken(secretStoreOf({ secretStorage: k2 }), 'my-vask', { data: ' d ', device: '' })).toEqual({ token: 'd', clearData: true, clearDevice: false });
		expect(k2.getSecret('my-vask')).toBe('d');
	});

	it('a keychain that refuses the token, or no secret chosen: nothing is lost', () => {
		const refusing: SecretStore = { getSecret: () => null, setSecret: () => { throw new Error('locked'); } };
		expect(loadToken(refusing, TOKEN_SECRET, { data: 'd', device: '' })).toEqual({ token: 'd', clearData: false, clearDevice: false });
		const forgetting: SecretStore = { getSecret: () => null, setSecret: () => undefined };
		expect(loadToken(forgetting, TOKEN_SECRET, { data: '', device: 'v' })).toEqual({ token: 'v', clearData: false, clearDevice: false });
		const k = new FakeSecretStorage();
		expect(loadToken(secretStoreOf({ secretStorage: k }), '', { data: 'd', device: 'v' })).toEqual({ token: '', clearData: false, clearDevice: false });
		expect(k.writes).toBe(0);
	});
});

describe('SettingsStore: the token in the right home', () => {
	it('an app with a keychain: a token in data.json moves there on the first load, and leaves data.json', async () => {
		const homes = new FakeHomes({ token: 'from-data', topK: 4, settingsVersion: SETTINGS_VERSION }, {}, new FakeSecretStorage());
		const store = new SettingsStore(homes.io());
		const s = await store.load();
		expect(s.token).toBe('from-data');
		expect(s.topK).toBe(4);
		expect(homes.keychain!.getSecret(TOKEN_SECRET)).toBe('from-data');
		expect(homes.dataToken).toBe('');
		expect(store.tokenHome).toBe('keychain');
		// the next start reads it from the keychain, and writes nothing
		const again = new SettingsStore(homes.io());
		const writes = homes.dataWrites;
		expect((await again.load()).token).toBe('from-data');
		expect(homes.dataWrites).toBe(writes);
		expect(homes.keychain!.writes).toBe(1);
	});

	it('an app with a keychain: device storage\'s token moves there, and leaves device storage', async () => {
		const homes = new FakeHomes(null, { token: 'from-device', serverUrl: 'https://vask.test' }, new FakeSecretStorage());
		const s = await new SettingsStore(homes.io()).load();
		expect(s).toMatchObject({ token: 'from-device', serverUrl: 'https://vask.test' });
		expect(homes.device).toEqual({ serverUrl: 'https://vask.test' });
		expect(homes.keychain!.getSecret(TOKEN_SECRET)).toBe('from-device');
		expect(homes.dataWrites).toBe(0);
	});

	it('a token changed in the settings goes to the keychain, never to data.json or device storage', async () => {
		const homes = new FakeHomes({ topK: 3 }, {}, new FakeSecretStorage({ 'vask-token': 'old' }));
		const store = new SettingsStore(homes.io());
		await store.load();
		const s = await store.update({ token: ' new ' });
		expect(s.token).toBe('new');
		expect(homes.keychain!.getSecret(TOKEN_SECRET)).toBe('new');
		expect(homes.dataToken).toBe('');
		expect(homes.device).toEqual({});
		// other settings still go where they went
		await store.update({ topK: 9, serverUrl: 'http://127.0.0.1:9000' });
		expect(homes.data).toMatchObject({ topK: 9, token: '' });
		expect(homes.device).toEqual({ serverUrl: 'http://127.0.0.1:9000' });
		expect(store.settings.token).toBe('new');
	});

	it('another secret picked (Obsidian\'s secret picker): its token is used; its name is this device\'s', async () => {
		const homes = new FakeHomes(null, {}, new FakeSecretStorage({ 'vask-token': 'a', 'work-vask': 'b' }));
		const store = new SettingsStore(homes.io());
		await store.load();
		expect((await store.update({ tokenSecret: 'work-vask' })).token).toBe('b');
		expect(homes.device).toEqual({ tokenSecret: 'work-vask' });
		expect((await new SettingsStore(homes.io()).load()).token).toBe('b');
		// none picked: no token (and nothing moved into a secret of no name)
		expect((await store.update({ tokenSecret: '' })).token).toBe('');
		expect(homes.keychain!.listSecrets()).toEqual(['vask-token', 'work-vask']);
	});

	it('a token changed in Obsidian\'s keychain settings is seen on refresh', async () => {
		const homes = new FakeHomes(null, {}, new FakeSecretStorage({ 'vask-token': 'a' }));
		const store = new SettingsStore(homes.io());
		await store.load();
		expect(store.refreshSecret()).toBe(false);
		homes.keychain!.setSecret('vask-token', 'b');
		expect(store.refreshSecret()).toBe(true);
		expect(store.settings.token).toBe('b');
	});

	it('an app with device storage but no keychain: the token stays in device storage, as before', async () => {
		const homes = new FakeHomes({ token: 'synced' }, { token: 'mine' }, null);
		const store = new SettingsStore(homes.io());
		expect((await store.load()).token).toBe('mine');
		expect(homes.dataWrites).toBe(0);
		await store.update({ token: 'changed' });
		expect(homes.device).toEqual({ token: 'changed' });
		expect(homes.dataToken).toBe('synced');
		expect(store.tokenHome).toBe('device');
		expect(store.refreshSecret()).toBe(false);
	});

	it('an app with neither (before 1.8.7): everything in data.json, as before', async () => {
		const homes = new FakeHomes({ token: 'synced' }, undefined, null);
		const store = new SettingsStore(homes.io());
		expect((await store.load()).token).toBe('synced');
		await store.update({ token: 'changed', serverUrl: 'http://127.0.0.1:9001' });
		expect(homes.data).toMatchObject({ token: 'changed', serverUrl: 'http://127.0.0.1:9001', tokenSecret: TOKEN_SECRET });
		expect(store.tokenHome).toBe('data');
	});

	it('the token is never in data.json on an app with a keychain, whatever is saved', async () => {
		const homes = new FakeHomes({ token: 'x' }, {}, new FakeSecretStorage());
		const store = new SettingsStore(homes.io());
		await store.load();
		for (const patch of [{ token: 'y' }, { chatModel: 'm' }, { token: 'z', topK: 2 }]) {
			await store.update(patch);
			expect(homes.dataToken).toBe('');
			expect((homes.device as DeviceSettings).token).toBeUndefined();
		}
		expect(store.settings.token).toBe('z');
		expect(DEFAULT_SETTINGS.tokenSecret).toBe(TOKEN_SECRET);
	});
});

describe('splitPatch with a keychain', () => {
	it('sends the token to the keychain, the secret\'s name to device storage', () => {
		expect(splitPatch({ token: ' t ', tokenSecret: 'x', topK: 1 }, true)).toEqual({ secret: 't', device: { tokenSecret: 'x' }, synced: { topK: 1 } });
		expect(splitPatch({ token: 't' }, false)).toEqual({ device: { token: 't' }, synced: {} });
	});

	it('a stored secret name that SecretStorage would refuse is not kept ("" is: none chosen)', () => {
		expect(normalizeDevice({ tokenSecret: 'Work Vask' })).toEqual({});
		expect(normalizeDevice({ tokenSecret: ' ' })).toEqual({ tokenSecret: '' });
		expect(normalizeSettings({ tokenSecret: 7 }).tokenSecret).toBe(TOKEN_SECRET);
		expect(normalizeSettings({ tokenSecret: 'work-vask' }).tokenSecret).toBe('work-vask');
	});
});
