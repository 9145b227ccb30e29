import { suite } from '../lib/suite.mjs';

suite('native');
