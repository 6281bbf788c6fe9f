// A worker thread of WebRTC viewers (threads.ts starts them): serves its parent port.
import { parentPort, workerData } from 'node:worker_threads';
import { serveViewers, type ViewerThreadSettings } from './viewer-thread.ts';

serveViewers(parentPort!, (workerData as { settings: ViewerThreadSettings }).settings);
