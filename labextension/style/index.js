import './index.css';
import './sidebar.css';
