// What the service does at start-up before anything else, done once for every test file (some
// test domain modules without creating an app).
import { enableLinearRegExps } from '../../server/host/core/linear-regexp';

enableLinearRegExps();
