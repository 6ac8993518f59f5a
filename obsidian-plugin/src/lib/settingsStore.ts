/**
 * The settings' three homes, loaded and saved: data.json (synced between devices), this device's
 * storage (Obsidian 1.8.7+: server URL, the local server's switches) and Obsidian's keychain
 * (1.11.4+: the token). Each home is optional but data.json, so the same code serves every app.
 */
import { isSecretId, loadToken, readSecret, tokenHome, type SecretStore, type TokenHome } from './secrets';
import {
	DEFAULT_SETTINGS,
	normalizeDevice,
	normalizeSettings,
	splitPatch,
	storedSettings,
	updatedSettings,
	withDevice,
	type DeviceSettings,
	type VaskSettings,
} from './settings';

/** A value kept under one key on this device (Obsidian's vault-scoped localStorage). */
export interface DeviceStorage {
	load(): unknown;
	save(data: DeviceSettings): void;
}

export interface SettingsIO {
	loadData(): Promise<unknown>;
	saveData(data: unknown): Promise<void>;
	/** null: the app has no device storage (before Obsidian 1.8.7). */
	device: DeviceStorage | null;
	/** null: the app has no keychain (before Obsidian 1.11.4). */
	secrets: SecretStore | null;
}

export class SettingsStore {
	private synced: VaskSettings = { ...DEFAULT_SETTINGS };
	private device: DeviceSettings = {};
	/** The keychain's token (with a keychain), read on load and when the secret changes. */
	private secretToken = '';
	private current: VaskSettings = { ...DEFAULT_SETTINGS };

	constructor(private readonly io: SettingsIO) {}

	/** The settings in effect; a new object after every change. */
	get settings(): VaskSettings {
		return this.current;
	}

	/** Where the token is kept on this device (the settings tab says so). */
	get tokenHome(): TokenHome {
		return tokenHome(this.io.secrets, this.io.device !== null);
	}

	/** Reads all three homes; the first load on an app with a keychain moves the token there. */
	async load(): Promise<VaskSettings> {
		this.synced = normalizeSettings(await this.io.loadData());
		this.device = this.io.device ? normalizeDevice(this.io.device.load()) : {};
		const merged = withDevice(this.synced, this.device);
		const moved = loadToken(this.io.secrets, merged.tokenSecret, { data: this.synced.token, device: this.device.token ?? '' });
		this.secretToken = moved.token;
		if (moved.clearDevice && this.io.device) {
			this.device = { ...this.device };
			delete this.device.token;
			this.io.device.save(this.device);
		}
		if (moved.clearData) {
			this.synced = { ...this.synced, token: '' };
			await this.io.saveData(storedSettings(this.synced));
		}
		return this.compose();
	}

	/** Saves a change where each setting lives: the token to the keychain where there is one. */
	async update(patch: Partial<VaskSettings>): Promise<VaskSettings> {
		const keychain = this.io.secrets;
		const split = splitPatch(patch, keychain !== null);
		let synced = split.synced;
		if (this.io.device) {
			if (Object.keys(split.device).length > 0) {
				this.device = normalizeDevice({ ...this.device, ...split.device });
				this.io.device.save(this.device);
			}
		} else {
			synced = { ...synced, ...split.device };
		}
		if (keychain) {
			const secretId = withDevice(this.synced, this.device).tokenSecret;
			const changed = split.secret !== undefined && readSecret(keychain, secretId) !== split.secret;
			if (changed && isSecretId(secretId)) keychain.setSecret(secretId, split.secret ?? '');
			this.secretToken = readSecret(keychain, secretId);
		}
		this.synced = updatedSettings(this.synced, synced);
		await this.io.saveData(storedSettings(this.synced));
		return this.compose();
	}

	/** Reads the keychain's token again (it can be changed in Obsidian's own settings); true when it changed. */
	refreshSecret(): boolean {
		const keychain = this.io.secrets;
		if (!keychain) return false;
		const token = readSecret(keychain, this.current.tokenSecret);
		if (token === this.secretToken) return false;
		this.secretToken = token;
		this.compose();
		return true;
	}

	private compose(): VaskSettings {
		const merged = withDevice(this.synced, this.device);
		this.current = this.io.secrets ? { ...merged, token: this.secretToken } : merged;
		return this.current;
	}
}
